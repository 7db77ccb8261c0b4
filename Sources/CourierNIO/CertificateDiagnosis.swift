@_spi(CourierTransport) import Courier
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Why a server's certificate was refused, in words a person can act on: BoringSSL reports every
/// refusal of a chain as one `CERTIFICATE_VERIFY_FAILED`, without saying whether the certificate
/// expired or its root is unknown. Under a session's trust settings, the transport then opens one
/// more connection to the server, completes a handshake that checks nothing, reads the
/// certificate, closes, and says what is wrong with it. Nothing is sent on that connection.
///
/// What the server shows the second time only shapes the message; the request has already failed.
enum CertificateDiagnosis {
    /// The longest the extra connection may take before the request fails with the general reason.
    static let timeout = TimeAmount.seconds(5)
    /// The reason when the certificate could not be looked at again.
    static let generalProblem = "its chain does not lead to a root the session trusts, or a certificate in it is out of its dates"

    /// Whether `error` is a refused chain, which this can say more about (a certificate for
    /// another host is reported as such already).
    static func applies(to error: any Error) -> Bool {
        guard case .handshakeFailed(let failure) = error as? NIOSSLError else { return false }
        return "\(failure)".contains("CERTIFICATE_VERIFY_FAILED")
    }

    /// What is wrong with the certificate the server at `url` shows, or ``generalProblem``.
    static func problem(with url: URL, on eventLoop: any EventLoop, now: Date = Date()) -> EventLoopFuture<String> {
        let host = url.host ?? ""
        let port = url.port ?? 443
        let context: NIOSSLContext
        do {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            return eventLoop.makeSucceededFuture(generalProblem)
        }
        // An IP address is no server name to send (RFC 6066).
        let serverName = isIPAddress(host) ? nil : host
        let handshake = eventLoop.makePromise(of: Void.self)
        let connection = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: serverName)
                    )
                    try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(promise: handshake))
                }
            }
            .connect(host: host, port: port)
        let deadline = eventLoop.scheduleTask(in: timeout) { handshake.fail(ChannelError.connectTimeout(timeout)) }
        connection.whenFailure { handshake.fail($0) }
        return handshake.futureResult.flatMap {
            connection.flatMap { $0.nioSSL_peerCertificate() }
        }.map { certificate -> String in
            guard let bytes = try? certificate?.toDERBytes(), let shown = try? TLSCertificate(derEncoded: bytes) else {
                return generalProblem
            }
            return describe(shown, now: now)
        }.recover { _ in generalProblem }.always { _ in
            deadline.cancel()
            connection.whenSuccess { $0.close(promise: nil) }
        }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// What is wrong with `certificate`, which a handshake under the session's roots refused.
    static func describe(_ certificate: TLSCertificate, now: Date) -> String {
        let format = ISO8601DateFormatter()
        if let validity = certificate.validity {
            if validity.upperBound < now { return "its certificate expired on \(format.string(from: validity.upperBound))" }
            if validity.lowerBound > now {
                return "its certificate is not valid before \(format.string(from: validity.lowerBound))"
            }
        }
        if certificate.isSelfIssued {
            return "its certificate is self-signed and not among the roots the session trusts"
        }
        return "its chain does not lead to a root the session trusts"
    }

    /// Completes its promise when the TLS handshake is done, or fails it with the pipeline's error.
    private final class HandshakeWatcher: ChannelInboundHandler, Sendable {
        typealias InboundIn = NIOAny
        private let promise: EventLoopPromise<Void>

        init(promise: EventLoopPromise<Void>) {
            self.promise = promise
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .handshakeCompleted = event as? TLSUserEvent { promise.succeed() }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(ChannelError.eof)
            context.fireChannelInactive()
        }
    }
}
