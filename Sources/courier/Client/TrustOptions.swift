import Courier
import Foundation

/// How the CLI checks servers and shows itself to them: `--cacert`, `--cert`/`--key`,
/// `--pinnedpubkey` and `--insecure`, as curl spells them, turned into the session's trust settings.
struct TrustOptions: Sendable {
    var trustRoots = TrustRoots.system
    var clientCertificate: ClientCertificate?
    var manager: ServerTrustManager?
    /// `--insecure`: the run warns on stderr.
    var isInsecure = false

    /// The settings for a request to `host`; a file that cannot be read, or a malformed pin, is
    /// an error whose description says which.
    static func make(
        host: String,
        caCertificateFile: String?,
        certificateFile: String?,
        keyFile: String?,
        pins: String?,
        insecure: Bool
    ) throws -> TrustOptions {
        var options = TrustOptions(isInsecure: insecure)
        if let caCertificateFile {
            options.trustRoots = .only(
                try TLSCertificate.certificates(contentsOf: URL(fileURLWithPath: caCertificateFile))
            )
        }
        if let certificateFile {
            options.clientCertificate = try ClientCertificate(
                certificateFile: URL(fileURLWithPath: certificateFile),
                privateKeyFile: keyFile.map { URL(fileURLWithPath: $0) }
            )
        }
        let pinList = try pins.map(parsePins)
        // The pins (or the lack of checks) hold for the URL's host; a redirect elsewhere gets
        // the default checks under --insecure, and fails under pins (curl pins every host: a
        // pin meant for one host never fits another's key).
        if let pinList {
            options.manager = ServerTrustManager(evaluators: [
                host: PublicKeysTrustEvaluator(
                    pins: pinList,
                    performDefaultValidation: !insecure,
                    validateHost: !insecure
                )
            ])
        } else if insecure {
            options.manager = ServerTrustManager(
                allHostsMustBeEvaluated: false,
                evaluators: [host: DisabledTrustEvaluator()]
            )
        }
        return options
    }

    /// `sha256//A;sha256//B` as the base64 pins; anything else is an error.
    static func parsePins(_ text: String) throws -> [String] {
        let pins = text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !pins.isEmpty else { throw TrustOptionError("--pinnedpubkey needs at least one sha256//BASE64 pin") }
        return try pins.map { pin in
            let base64 = pin.dropFirst("sha256//".count)
            guard pin.hasPrefix("sha256//"), let digest = Data(base64Encoded: String(base64)), digest.count == 32 else {
                throw TrustOptionError(
                    "--pinnedpubkey takes sha256// then the base64 SHA-256 of a public key, not \"\(pin)\""
                )
            }
            return String(base64)
        }
    }
}

/// A trust option that cannot be used, in words for the command line.
struct TrustOptionError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
