import { type KeyType } from '../domain/keys.js';
import { type Rail } from '../domain/rails.js';
/** The company profile the gateway sends with each money request (it authenticated the company). */
export interface CompanyProfile {
    nit: string;
    ivaApplicable: boolean;
    multiSigThreshold: number;
    counterpartyDailyLimitCents: bigint;
    counterpartyMonthlyLimitCents: bigint;
}
export declare const EMPTY_PROFILE: CompanyProfile;
/** A send as decoded from the wire (proto3: absent optional strings may be undefined or ''). */
export interface SendInput {
    amount: bigint;
    reference?: string | undefined;
    description?: string | undefined;
    brebKey?: {
        type: string;
        value: string;
    } | undefined;
    bankAccount?: {
        bankId: number;
        accountTypeId: number;
        accountNumber: string;
        documentTypeId: number;
        documentNumber: string;
        holderFirstName: string;
        holderLastName: string;
        bankName: string;
        bankAchCode: string;
    } | undefined;
    targetAnchorHandle?: string | undefined;
    targetName?: string | undefined;
    targetDocument?: string | undefined;
    company?: CompanyProfile | undefined;
    requestHash?: string | undefined;
}
export type SendDestinationCommand = {
    kind: 'BREB_KEY';
    keyType: KeyType;
    keyValue: string;
} | {
    kind: 'BREB_ANCHOR';
    anchorHandle: string;
} | {
    kind: 'ACH';
    bankId: number;
    accountTypeId: number;
    accountNumber: string;
    documentTypeId: number;
    documentNumber: string;
    holderFirstName: string;
    holderLastName: string;
    bankName: string;
    bankAchCode: string;
};
/** A send that passed the schema checks (400). Business checks (422, 503…) come after, in order. */
export interface SendCommand {
    rail: Rail;
    amount: bigint;
    reference: string | null;
    description: string | null;
    destination: SendDestinationCommand;
    targetName: string | null;
    targetDocument: string | null;
    company: CompanyProfile;
    requestHash: string;
}
export declare const MAX_REFERENCE = 100;
export declare const MAX_DESCRIPTION = 255;
export declare const MAX_TARGET_NAME = 200;
export declare const MAX_HOLDER_NAME = 64;
/** Schema checks of §4.5 and §8: every problem at once, as INVALID_REQUEST details.fields. */
export declare function validateSend(input: SendInput): SendCommand;
/**
 * The gateway sends the canonical hash of the client's HTTP body; a caller that does not (an
 * internal client) gets one computed here from the fields that make the send what it is.
 */
export declare function fallbackRequestHash(input: SendInput): string;
