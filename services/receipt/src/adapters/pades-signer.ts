import { createHash, sign as cryptoSign } from 'node:crypto';
import { plainAddPlaceholder } from '@signpdf/placeholder-plain';
import { SignPdf } from '@signpdf/signpdf';
import { Signer, SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import forge from 'node-forge';
import type { ReceiptSigner } from '../app/ports.js';
import type { SigningKey } from './signing-key.js';

/**
 * PAdES baseline B-B signatures on the rendered receipts (ETSI EN 319 142-1): @signpdf appends a
 * signature field and its dictionary as an incremental update (`placeholder-plain`: the rendered
 * bytes are kept as they are), with `/SubFilter /ETSI.CAdES.detached` and the signing time in
 * `/M`; then computes the `/ByteRange` (the whole file but the `/Contents` hole) and puts the CMS
 * of `CadesDetachedSigner` into `/Contents`.
 *
 * Why our own Signer instead of `@signpdf/signer-p12`: its CMS (node-forge's PKCS#7) carries a
 * signing-time attribute and no signing-certificate-v2, which PAdES baseline forbids and requires
 * respectively; it re-opens the PKCS#12 and signs in pure JS on every call (~100 ms per receipt
 * here); and an instance signs only once (its PKCS#12 buffer is consumed by the first call).
 */

const { asn1 } = forge;
const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  sha256: '2.16.840.1.101.3.4.2.1',
  rsaEncryption: '1.2.840.113549.1.1.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
} as const;

type Asn1 = forge.asn1.Asn1;
const U = asn1.Class.UNIVERSAL;
const seq = (...v: Asn1[]) => asn1.create(U, asn1.Type.SEQUENCE, true, v);
const oid = (o: string) => asn1.create(U, asn1.Type.OID, false, asn1.oidToDer(o).getBytes());
const int = (n: number) => asn1.create(U, asn1.Type.INTEGER, false, asn1.integerToDer(n).getBytes());
const octets = (b: Buffer) => asn1.create(U, asn1.Type.OCTETSTRING, false, b.toString('binary'));
const nul = () => asn1.create(U, asn1.Type.NULL, false, '');
const tagged = (n: number, v: Asn1[]) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, n, true, v);
const der = (a: Asn1) => Buffer.from(asn1.toDer(a).getBytes(), 'binary');
const parse = (b: Buffer) => asn1.fromDer(forge.util.createBuffer(b.toString('binary')));
/** DER's SET OF: the members in the order of their encodings. */
const sorted = (v: Asn1[]) =>
  v
    .map((a) => ({ a, d: der(a) }))
    .sort((x, y) => Buffer.compare(x.d, y.d))
    .map((x) => x.a);
const setOf = (v: Asn1[]) => asn1.create(U, asn1.Type.SET, true, sorted(v));
const attribute = (type: string, value: Asn1) => seq(oid(type), asn1.create(U, asn1.Type.SET, true, [value]));

/** The issuer Name and serialNumber of a certificate (DER), as they are written in it. */
function issuerAndSerial(cert: Buffer): { issuer: Asn1; serial: Asn1 } {
  const tbs = (parse(cert).value as Asn1[])[0]!.value as Asn1[];
  // TBSCertificate: [0] version (absent for v1), serialNumber, signature, issuer, …
  const i = tbs[0]!.tagClass === asn1.Class.CONTEXT_SPECIFIC ? 1 : 0;
  return { serial: tbs[i]!, issuer: tbs[i + 2]! };
}

/**
 * A detached CMS SignedData as PAdES baseline B-B wants it (CAdES-BES without signing-time): signed
 * attributes content-type, message-digest (SHA-256 of the signed byte ranges) and
 * signing-certificate-v2 (the signer certificate's SHA-256 and issuer/serial, which binds the
 * certificate to the signature); the certificates of the key's chain; RSA PKCS#1 v1.5 or ECDSA,
 * computed by Node.
 */
export class CadesDetachedSigner extends Signer {
  private readonly sid: { issuer: Asn1; serial: Asn1 };
  private readonly essCertId: Asn1;

  constructor(private readonly key: SigningKey) {
    super();
    for (const c of key.certificates) {
      // The CMS carries them re-encoded from their parse: it must give their own bytes back.
      if (!der(parse(c)).equals(c)) throw new Error('a certificate of the signing key does not re-encode to its own DER');
    }
    const signerCert = key.certificates[0]!;
    this.sid = issuerAndSerial(signerCert);
    // ESSCertIDv2 { hashAlgorithm (SHA-256, the default: left out), certHash, issuerSerial { GeneralNames { directoryName [4] Name }, serialNumber } }
    this.essCertId = seq(octets(createHash('sha256').update(signerCert).digest()), seq(seq(tagged(4, [this.sid.issuer])), this.sid.serial));
  }

  /** @signpdf calls it with the bytes of the /ByteRange (the PDF without the /Contents hole); the signing time is in the signature dictionary (/M). */
  override async sign(content: Buffer): Promise<Buffer> {
    const attrs = [
      attribute(OID.contentType, oid(OID.data)),
      attribute(OID.messageDigest, octets(createHash('sha256').update(content).digest())),
      attribute(OID.signingCertificateV2, seq(seq(this.essCertId))),
    ];
    const signedAttrs = setOf(attrs);
    // The signature covers the attributes' DER as a SET OF (tag 0x31); they are stored as [0] IMPLICIT.
    const signature = cryptoSign('sha256', der(signedAttrs), this.key.privateKey);
    const algorithm = this.key.keyType === 'rsa' ? seq(oid(OID.rsaEncryption), nul()) : seq(oid(OID.ecdsaWithSha256));
    const sha256 = seq(oid(OID.sha256));
    const signerInfo = seq(
      int(1), // sid is issuerAndSerialNumber
      seq(this.sid.issuer, this.sid.serial),
      sha256,
      tagged(0, signedAttrs.value as Asn1[]),
      algorithm,
      octets(signature),
    );
    const signedData = seq(
      int(1),
      setOf([sha256]),
      seq(oid(OID.data)), // detached: no eContent
      tagged(0, sorted(this.key.certificates.map(parse))),
      setOf([signerInfo]),
    );
    return der(seq(oid(OID.signedData), tagged(0, [signedData])));
  }
}

/**
 * The receipt service's ReceiptSigner: signs each rendered receipt with the configured key. The room
 * reserved for the CMS in /Contents (written in hex, so twice its size in the file) is the
 * certificates it carries plus 2 KiB for the rest (the signature of an RSA 8192 key is 1 KiB).
 */
export class PadesReceiptSigner implements ReceiptSigner {
  private readonly cms: CadesDetachedSigner;
  private readonly signpdf = new SignPdf();
  private readonly signatureLength: number;

  constructor(private readonly key: SigningKey) {
    this.cms = new CadesDetachedSigner(key);
    const certs = key.certificates.reduce((n, c) => n + c.length, 0);
    this.signatureLength = certs + 2048;
  }

  /** Who signs: the certificate's subject common name. */
  get signerName(): string {
    return this.key.commonName;
  }

  /** The signing certificate's common name and SHA-256 fingerprint. */
  get certificate(): { name: string; sha256: string } {
    return { name: this.key.commonName, sha256: this.key.signer.fingerprint256 };
  }

  async sign(pdf: Buffer, o: { at: Date; reason: string }): Promise<Buffer> {
    const withPlaceholder = plainAddPlaceholder({
      pdfBuffer: pdf,
      reason: o.reason,
      contactInfo: '',
      name: this.key.commonName,
      location: 'Colombia',
      signingTime: o.at,
      signatureLength: this.signatureLength,
      subFilter: SUBFILTER_ETSI_CADES_DETACHED,
      // No appName: @signpdf writes it as a PDF name, which a space would break.
    });
    return this.signpdf.sign(withPlaceholder, this.cms);
  }
}
