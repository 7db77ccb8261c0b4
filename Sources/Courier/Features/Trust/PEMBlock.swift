import Foundation

/// One block of a PEM file (RFC 7468): `-----BEGIN LABEL-----`, base64 lines, `-----END LABEL-----`.
struct PEMBlock: Equatable {
    /// The label, such as `CERTIFICATE` or `PRIVATE KEY`.
    let label: String
    /// The decoded bytes (DER).
    let bytes: [UInt8]

    /// Why a text is not PEM, in words that quote none of it (it may be a private key).
    enum Problem: Error, Equatable {
        case noBlock
        case unterminated(label: String)
        case mismatchedEnd(label: String)
        case invalidBase64(label: String)
        /// A block with RFC 1421 headers (`Proc-Type: 4,ENCRYPTED`): an encrypted key.
        case encrypted(label: String)
    }

    /// Every block of `text`, in order; text outside blocks is ignored, as OpenSSL ignores it.
    /// One pass over the text.
    static func blocks(in text: String) throws(Problem) -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var open: (label: String, base64: String)?
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if let label = boundaryLabel(line, kind: "BEGIN") {
                if let open { throw .unterminated(label: open.label) }
                open = (label, "")
            } else if let label = boundaryLabel(line, kind: "END") {
                guard let current = open else { continue }
                guard current.label == label else { throw .mismatchedEnd(label: current.label) }
                guard let data = Data(base64Encoded: current.base64), !data.isEmpty else {
                    throw .invalidBase64(label: label)
                }
                blocks.append(PEMBlock(label: label, bytes: [UInt8](data)))
                open = nil
            } else if let current = open {
                // RFC 1421's headers, which only OpenSSL's encrypted keys still carry.
                if line.contains(":") { throw .encrypted(label: current.label) }
                open?.base64 += line
            }
        }
        if let open { throw .unterminated(label: open.label) }
        guard !blocks.isEmpty else { throw .noBlock }
        return blocks
    }

    /// The label of a `-----BEGIN LABEL-----` (or `END`) line, or `nil` if `line` is not one.
    private static func boundaryLabel(_ line: String, kind: String) -> String? {
        let prefix = "-----\(kind) "
        let suffix = "-----"
        guard line.hasPrefix(prefix), line.hasSuffix(suffix), line.count >= prefix.count + suffix.count else {
            return nil
        }
        return String(line.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
