@_spi(CourierTransport) import Courier
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The chain a server's certificate was accepted through, rebuilt in Courier, for evaluators
/// that look past the server's own certificate (a key pinned on an intermediate or a root).
///
/// BoringSSL builds and checks the chain during the handshake, but AsyncHTTPClient shows only
/// the server's certificate afterwards. So the transport reads the certificates the server
/// presents (`ServerCertificateProbe`) and rebuilds the chain from them with swift-certificates:
/// - when the handshake checked the chain, the chain swift-certificates' RFC 5280 verifier builds
///   from the server's certificate, through the presented ones, to the same roots the handshake
///   trusted, valid now;
/// - when the handshake checked nothing (`performDefaultValidation: false`, `validateHost:
///   false`), the server's certificate followed by each presented certificate whose key signed
///   the one before, as far as they go: a pin on an issuer then still means that the pinned key
///   signed the server's certificate.
///
/// Either way every certificate after the first is tied to it by signatures, and the first is the
/// one the request's own connection proved it holds the key of: what the probe reads counts only
/// through those signatures.
///
/// The verifier is handed the presented certificates already linked, one per subject: its search
/// branches on every candidate with the right subject and a signature that checks, and a server
/// could otherwise send many certificates under one name and key (differing in their alternative
/// names) for it to try in every order. Linked, the search follows a single path.
struct CertificateChain: Sendable {
    /// The largest number of presented certificates looked at (BoringSSL bounds the message, and
    /// real chains have three or four).
    static let maximumCandidates = 16

    /// The roots the handshake trusted; `nil` when it checked no chain.
    let roots: CertificateStore?
    /// Whether ``roots`` holds every root the handshake trusted: not on Apple platforms when the
    /// system's are among them, which swift-certificates reads on Linux only.
    let knowsRoots: Bool

    /// Whether swift-certificates can read every root a connection made with `tls` trusts: not
    /// the system's on Apple platforms.
    static func knowsRoots(of tls: TLSConfiguration) -> Bool {
        #if os(Linux)
        return true
        #else
        switch tls.trustRoots {
        case .none, .default: return tls.certificateVerification == .none
        case .file, .certificates: return true
        }
        #endif
    }

    /// How a connection made with `tls` was checked.
    init(tls: TLSConfiguration) {
        guard tls.certificateVerification != .none else {
            roots = nil
            knowsRoots = true
            return
        }
        knowsRoots = Self.knowsRoots(of: tls)
        var store: CertificateStore
        switch tls.trustRoots {
        case .none, .default: store = CertificateStore.systemTrustRoots
        case .file(let path): store = CertificateStore(Self.certificates(atPath: path))
        case .certificates(let certificates): store = CertificateStore(certificates.compactMap(Self.certificate))
        }
        for additional in tls.additionalTrustRoots {
            switch additional {
            case .file(let path): store.append(contentsOf: Self.certificates(atPath: path))
            case .certificates(let certificates): store.append(contentsOf: certificates.compactMap(Self.certificate))
            }
        }
        roots = store
    }

    /// A chain as the evaluators see it, and as swift-certificates parsed it.
    struct Rebuilt: Sendable {
        /// The server's certificate first; only it when no chain was built.
        let certificates: [TLSCertificate]
        /// The same certificates, parsed; empty when the server's certificate could not be.
        let parsed: [Certificate]
        /// Whether the chain was rebuilt: `false` when only the server's certificate is known
        /// (then an intermediate may be missing from it unseen).
        let isRebuilt: Bool
    }

    /// The chain from `leaf` through `presented` (as the server sent them, its own first), leaf
    /// first; `[leaf]` alone when none can be built.
    func chain(from leaf: TLSCertificate, presented: [NIOSSLCertificate]) async -> [TLSCertificate] {
        await rebuild(from: leaf, presented: presented).certificates
    }

    /// ``chain(from:presented:)``, with the certificates parsed.
    func rebuild(from leaf: TLSCertificate, presented: [NIOSSLCertificate]) async -> Rebuilt {
        guard let first = try? Certificate(derEncoded: leaf.derEncoded) else {
            return Rebuilt(certificates: [leaf], parsed: [], isRebuilt: false)
        }
        let alone = Rebuilt(certificates: [leaf], parsed: [first], isRebuilt: false)
        let candidates = presented.prefix(Self.maximumCandidates).compactMap(Self.certificate).filter { $0 != first }
        let linked = Self.linked(from: first, through: candidates)
        let chain: [Certificate]
        if let roots {
            // Dates are checked against the time of validation.
            var verifier = Verifier(rootCertificates: roots) {
                RFC5280Policy()
                ServerAuthenticationPolicy()
            }
            switch await verifier.validate(leaf: first, intermediates: CertificateStore(linked.dropFirst())) {
            case .validCertificate(let validated): chain = Array(validated)
            case .couldNotValidate: return alone
            }
        } else {
            chain = linked
        }
        var certificates = [leaf]
        for certificate in chain.dropFirst() {
            var serializer = DER.Serializer()
            guard (try? serializer.serialize(certificate)) != nil,
                let encoded = try? TLSCertificate(derEncoded: serializer.serializedBytes)
            else { return alone }
            certificates.append(encoded)
        }
        return Rebuilt(certificates: certificates, parsed: chain, isRebuilt: true)
    }

    /// `leaf`, then each candidate whose key signed the certificate before it, while one does and
    /// until a self-issued one; never two with the same subject. Of several that could come next
    /// (a renewed intermediate sent beside the old one), one valid `now` is taken first, as
    /// BoringSSL prefers.
    static func linked(from leaf: Certificate, through candidates: [Certificate], now: Date = Date()) -> [Certificate] {
        var chain = [leaf]
        var remaining = candidates
        while let tip = chain.last, tip.issuer != tip.subject {
            let issuers = remaining.indices.filter { index in
                let candidate = remaining[index]
                return candidate.subject == tip.issuer && !chain.contains { $0.subject == candidate.subject }
                    && candidate.publicKey.isValidSignature(tip.signature, for: tip)
            }
            // Compared one bound at a time: a certificate may give its dates in the wrong order.
            let current = issuers.first { index in
                remaining[index].notValidBefore <= now && now <= remaining[index].notValidAfter
            }
            guard let next = current ?? issuers.first else { break }
            chain.append(remaining.remove(at: next))
        }
        return chain
    }

    private static func certificate(_ certificate: NIOSSLCertificate) -> Certificate? {
        (try? certificate.toDERBytes()).flatMap { try? Certificate(derEncoded: $0) }
    }

    /// The certificates in a PEM file, or in a directory's files named as OpenSSL's `c_rehash`
    /// names them (`<8 hex digits>.<n>`), the only ones BoringSSL looks up there; what cannot be
    /// read is left out (the handshake did not use it either).
    private static func certificates(atPath path: String) -> [Certificate] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
        let files =
            isDirectory.boolValue
            ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter(isHashedName).map {
                path + "/" + $0
            } : [path]
        return files.flatMap { file in
            ((try? NIOSSLCertificate.fromPEMFile(file)) ?? []).compactMap(Self.certificate)
        }
    }

    /// Whether `name` is a hashed certificate file's name: eight hex digits, a dot, a number.
    static func isHashedName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 8, !parts[1].isEmpty, parts[1].count <= 9 else { return false }
        return parts[0].allSatisfy(\.isHexDigit) && parts[1].allSatisfy { $0.isASCII && $0.isNumber }
    }
}
