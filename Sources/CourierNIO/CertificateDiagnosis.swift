@_spi(CourierTransport) import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// Why a server's certificate was refused, in words a person can act on: BoringSSL reports every
/// refusal of a chain as one `CERTIFICATE_VERIFY_FAILED`, without saying whether the certificate
/// expired or its root is unknown. Under a session's trust settings, the transport then opens one
/// more connection to the server (only when its own connections go straight there: no proxy, no
/// DNS override), reads the certificate (`ServerCertificateProbe`, within its time limit) and says
/// what is wrong with it. Nothing is sent on that connection.
///
/// What the server shows the second time only shapes the message; the request has already failed.
enum CertificateDiagnosis {
    /// The reason when nothing more precise can be said.
    static let generalProblem =
        "its chain does not lead to a root the session trusts, or a certificate in it is not acceptable "
        + "(out of its dates, or a key usage or signature BoringSSL refuses)"

    /// Whether `error` is a refused chain, which this can say more about (a certificate for
    /// another host is reported as such already).
    static func applies(to error: any Error) -> Bool {
        guard case .handshakeFailed(let failure) = error as? NIOSSLError else { return false }
        return "\(failure)".contains("CERTIFICATE_VERIFY_FAILED")
    }

    /// One diagnosis per server at a time, its answer kept for a few seconds: every request queued
    /// on a refused connection fails at once with the same error, and each would otherwise open a
    /// connection of its own.
    final class Cache: Sendable {
        private struct Entry {
            let problem: EventLoopFuture<String>
            let madeAt: NIODeadline
        }

        private static let lifetime = TimeAmount.seconds(10)
        private static let maximumEntries = 64
        private let eventLoopGroup: any EventLoopGroup
        private let entries = NIOLockedValueBox([String: Entry]())

        init(eventLoopGroup: any EventLoopGroup) {
            self.eventLoopGroup = eventLoopGroup
        }

        /// What is wrong with the certificate of the server at `host` (normalised: no brackets)
        /// and `port`; ``generalProblem`` when it cannot be read.
        func problem(host: String, port: Int) -> EventLoopFuture<String> {
            let key = "\(host) \(port)"
            let now = NIODeadline.now()
            let eventLoop = eventLoopGroup.any()
            return entries.withLockedValue { entries in
                if let entry = entries[key], now - entry.madeAt < Self.lifetime { return entry.problem }
                entries = entries.filter { now - $0.value.madeAt < Self.lifetime }
                let problem = CertificateDiagnosis.problem(host: host, port: port, on: eventLoop)
                if entries.count < Self.maximumEntries { entries[key] = Entry(problem: problem, madeAt: now) }
                return problem
            }
        }
    }

    /// What is wrong with the certificate the server at `host`:`port` shows, or ``generalProblem``.
    static func problem(
        host: String,
        port: Int,
        on eventLoop: any EventLoop,
        now: Date = Date()
    )
        -> EventLoopFuture<String>
    {
        ServerCertificateProbe.presentedCertificates(host: host, port: port, on: eventLoop).map { certificates in
            certificates.first
                .flatMap { try? $0.toDERBytes() }
                .flatMap { try? TLSCertificate(derEncoded: $0) }
                .map { describe($0, now: now) } ?? generalProblem
        }.recover { _ in generalProblem }
    }

    /// What is wrong with `certificate`, which a handshake under the session's roots refused.
    static func describe(_ certificate: TLSCertificate, now: Date) -> String {
        let format = ISO8601DateFormatter()
        if let validity = certificate.validity {
            if validity.upperBound < now {
                return "its certificate expired on \(format.string(from: validity.upperBound))"
            }
            if validity.lowerBound > now {
                return "its certificate is not valid before \(format.string(from: validity.lowerBound))"
            }
        }
        if certificate.isSelfIssued {
            return "its certificate is self-signed and not among the roots the session trusts"
        }
        return generalProblem
    }
}
