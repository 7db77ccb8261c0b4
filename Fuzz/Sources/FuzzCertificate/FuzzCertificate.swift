import Foundation
import FuzzSupport

@testable import Courier

// A certificate or key file as a user gives it, and a certificate as a server shows it: the PEM
// reader (`PEMBlock.blocks(in:)`), the DER reader (`DERReader`) on the same bytes as DER, and
// `TLSCertificate`/`TLSPrivateKey` on both. Nothing traps, every block decodes to bytes the text
// could hold, and a public key found lies inside the certificate; `scripts/fuzz`'s time limit
// per input catches a read that is not linear.
@main
enum Main {
    static func main() {
        runFuzzer(testOneInput)
    }
}

/// One input; libFuzzer calls it over and over. Exported under libFuzzer's name as well, for the
/// case where the linker picks libFuzzer's own `main` over this program's.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    if let blocks = try? PEMBlock.blocks(in: text) {
        let decoded = blocks.reduce(0) { $0 + $1.bytes.count }
        fuzzCheck(decoded <= text.utf8.count, "more bytes decoded than the text holds")
        fuzzCheck(blocks.allSatisfy { !$0.bytes.isEmpty }, "an empty block")
    }
    if let certificates = try? TLSCertificate.certificates(pemEncoded: text) {
        for certificate in certificates {
            fuzzCheck(certificate.publicKeyPin.hasPrefix("sha256//"), "a pin without its prefix")
        }
    }
    _ = try? TLSPrivateKey(pemEncoded: text)
    if let info = DERReader.subjectPublicKeyInfo(ofCertificate: bytes) {
        fuzzCheck(info.startIndex >= 0 && info.endIndex <= bytes.count, "a key outside the certificate")
        fuzzCheck(info.first == DERReader.sequenceTag, "a key that is not a SEQUENCE")
        let certificate = try? TLSCertificate(derEncoded: bytes)
        fuzzCheck(certificate != nil, "a certificate shape found but refused")
        if let validity = certificate?.validity {
            fuzzCheck(validity.lowerBound.timeIntervalSince1970 > -62_135_596_800, "a date before year 1")
        }
        _ = certificate?.isSelfIssued
    }
    var reader = DERReader(bytes[...])
    var elements = 0
    while let element = reader.next() {
        elements += 1
        fuzzCheck(element.content.count < element.encoded.count, "an element no longer than its content")
    }
    fuzzCheck(elements <= bytes.count / 2, "more elements than pairs of bytes")
    return 0
}
