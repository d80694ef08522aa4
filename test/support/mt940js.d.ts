// mt940js ships no type declarations: the part the statements test uses (its README's API).
declare module 'mt940js' {
  export interface Mt940Transaction {
    date: Date;
    amount: number;
    reversal: boolean;
    currency: string;
    details: string;
    transactionType: string;
    reference: string;
    entryDate?: Date;
    bankReference?: string;
  }
  export interface Mt940Statement {
    transactionReference: string;
    accountIdentification: string;
    number: { statement: string; sequence?: string };
    openingBalanceDate: Date;
    closingBalanceDate: Date;
    currency: string;
    openingBalance: number;
    closingBalance: number;
    closingAvailableBalance: number;
    transactions: Mt940Transaction[];
    /** A statement-level :86: (after the closing balances), lines joined by \n. */
    informationToAccountOwner?: string;
  }
  export class Parser {
    parse(data: string, withTags?: boolean): Mt940Statement[];
  }
  const mt940: { Parser: typeof Parser };
  export default mt940;
}
