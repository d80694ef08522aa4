import { ledgerV1, transferV1 } from '@wallet/proto';
import { type TransferRecord } from '../domain/transfer.js';
import type { AmlEntry, ApprovalView } from '../app/ports.js';
import type { CompanyProfile, SendInput } from '../app/send-input.js';
/** proto ⇄ application values (proto enums are string enums such as 'RAIL_BREB'). */
export declare const railName: (r: ledgerV1.Rail | undefined) => string;
export declare const protoRail: (r: "BREB" | "ACH") => ledgerV1.Rail;
export declare function companyFromProto(c: transferV1.CompanyProfile | undefined): CompanyProfile;
export declare function sendFromProto(r: transferV1.SendRequest): SendInput;
/** §2.5 fields: user-visible status (PENDING until the rail decides), net = amount − fee (CONTRACT §2). */
export declare function transferToProto(t: TransferRecord): transferV1.Transfer;
export declare function amlToProto(e: AmlEntry): transferV1.AmlEntry;
/** CONTRACT §5 approval item, plus the transfer's figures and current status. */
export declare function approvalToProto(a: ApprovalView): transferV1.Approval;
