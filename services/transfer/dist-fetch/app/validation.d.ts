/** Collects every problem of a request, then fails once with all of them (400 INVALID_REQUEST). */
export declare class Problems {
    private readonly list;
    add(path: string, message: string): this;
    get empty(): boolean;
    throwIfAny(): void;
}
export declare const isUuid: (v: string) => boolean;
/** The company the caller acts for, from `x-company-id` metadata only (ARCHITECTURE rule 5). */
export declare function requireCompany(companyId: string | undefined): string;
/** Text length in Unicode code points (CONTRACT §9). */
export declare const codePoints: (v: string) => number;
/** Empty strings mean "not given": proto3 cannot tell them apart on every client. */
export declare function orNull(v: string | null | undefined): string | null;
export declare function checkText(p: Problems, path: string, v: string | null, opts: {
    min?: number;
    max: number;
    required?: boolean;
}): void;
