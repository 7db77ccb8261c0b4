import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// One more TLS handshake with a server, to read every certificate it presents: AsyncHTTPClient's
/// TLS handler shows only the server's own certificate once a handshake is done, and takes no
/// verification callback (its issue #285), which is where the rest of the chain is visible.
///
/// The probe connects, takes the certificates from its verification callback, completes the
/// handshake (so the server sees no alert) and closes. Nothing is sent on the connection. What it
/// reads is only ever used as a candidate: a certificate the probe returns counts for a request
/// only when a signature ties it to the certificate that request's own connection proved (see
/// `CertificateChain`), so a server that shows something else the second time gains nothing.
enum ServerCertificateProbe {
    /// The longest a probe may take, connection included.
    static let timeout = TimeAmount.seconds(5)

    /// The certificates the server at `address` presents for `serverName`, its own first; an
    /// error if no handshake got that far within ``timeout``.
    static func presentedCertificates(
        at address: SocketAddress,
        serverName: String?,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<[NIOSSLCertificate]> {
        presentedCertificates(serverName: serverName, on: eventLoop) { $0.connect(to: address) }
    }

    /// The certificates the server at `host` and `port` presents (its name sent unless it is an
    /// IP address), its own first; an error if no handshake got that far within ``timeout``.
    static func presentedCertificates(
        host: String,
        port: Int,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<[NIOSSLCertificate]> {
        presentedCertificates(serverName: isIPAddress(host) ? nil : host, on: eventLoop) {
            $0.connect(host: host, port: port)
        }
    }

    private static func presentedCertificates(
        serverName: String?,
        on eventLoop: any EventLoop,
        connect: (ClientBootstrap) -> EventLoopFuture<any Channel>
    ) -> EventLoopFuture<[NIOSSLCertificate]> {
        let context: NIOSSLContext
        do {
            var configuration = TLSConfiguration.makeClientConfiguration()
            // Not `.none`, which would skip the callback: the callback replaces the checks.
            configuration.certificateVerification = .noHostnameVerification
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        guard let bootstrap = ClientBootstrap(validatingGroup: eventLoop) else {
            return eventLoop.makeFailedFuture(ChannelError.badInterfaceAddressFamily)
        }
        let connection =
            bootstrap
            .connectTimeout(timeout)
            .channelInitializer { channel in
                // Every channel Happy Eyeballs tries gets a collector of its own; only the
                // winner's is read.
                channel.eventLoop.makeCompletedFuture {
                    let collector = Collector(promise: channel.eventLoop.makePromise())
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: serverName) { certificates, verdict in
                            collector.promise.succeed(certificates)
                            verdict.succeed(.certificateVerified)
                        }
                    )
                    try channel.pipeline.syncOperations.addHandler(collector)
                }
            }
        let channel = connect(connection)
        let certificates = channel.flatMap { channel in
            channel.pipeline.handler(type: Collector.self).flatMap { $0.promise.futureResult }
        }
        let answer = eventLoop.makePromise(of: [NIOSSLCertificate].self)
        answer.completeWith(certificates)
        let deadline = eventLoop.scheduleTask(in: timeout) { answer.fail(ChannelError.connectTimeout(timeout)) }
        answer.futureResult.whenComplete { _ in
            deadline.cancel()
            channel.whenSuccess { $0.close(promise: nil) }
        }
        return answer.futureResult
    }

    /// What probes read, by the server's address, the name sent and the certificate the server
    /// proved on the connection that asked: the connections a pool opens to one server share one
    /// probe, and a server that changes its certificate is probed again. An answer is kept for
    /// ``Cache/lifetime`` (a failure for ``Cache/failureLifetime``, so that a server that refuses
    /// probes is not asked by every connection).
    final class Cache: Sendable {
        private struct Key: Hashable {
            let address: String
            let serverName: String?
            let certificate: [UInt8]
        }

        private struct Entry {
            let certificates: EventLoopFuture<[NIOSSLCertificate]>
            let madeAt: NIODeadline
            /// Set when the probe failed (at most ``ServerCertificateProbe/timeout`` after `madeAt`).
            var failed = false
        }

        static let lifetime = TimeAmount.minutes(30)
        static let failureLifetime = TimeAmount.seconds(10)
        private static let maximumEntries = 256
        private let entries = NIOLockedValueBox([Key: Entry]())

        /// The certificates the server at `address` presents for `serverName`, probed unless a
        /// probe for the same server certificate (`proved`, DER) is under way or kept.
        func presentedCertificates(
            at address: SocketAddress,
            serverName: String?,
            proved: [UInt8],
            on eventLoop: any EventLoop
        ) -> EventLoopFuture<[NIOSSLCertificate]> {
            let key = Key(address: "\(address)", serverName: serverName, certificate: proved)
            let now = NIODeadline.now()
            let (certificates, isNew) = entries.withLockedValue { entries in
                if let entry = entries[key], Self.isFresh(entry, at: now) { return (entry.certificates, false) }
                if entries.count >= Self.maximumEntries { entries = entries.filter { Self.isFresh($0.value, at: now) } }
                let certificates = ServerCertificateProbe.presentedCertificates(
                    at: address,
                    serverName: serverName,
                    on: eventLoop
                )
                guard entries.count < Self.maximumEntries else { return (certificates, false) }
                entries[key] = Entry(certificates: certificates, madeAt: now)
                return (certificates, true)
            }
            // Outside the lock: a future that has already failed calls back at once.
            if isNew {
                certificates.whenFailure { [self] _ in
                    entries.withLockedValue { entries in
                        if entries[key]?.certificates === certificates { entries[key]?.failed = true }
                    }
                }
            }
            return certificates
        }

        private static func isFresh(_ entry: Entry, at now: NIODeadline) -> Bool {
            now - entry.madeAt < (entry.failed ? Self.failureLifetime : Self.lifetime)
        }
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// Holds what one connection's verification callback saw; fails when the connection fails
    /// or goes away before the certificates came (completing a promise again changes nothing).
    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = NIOAny
        let promise: EventLoopPromise<[NIOSSLCertificate]>

        init(promise: EventLoopPromise<[NIOSSLCertificate]>) {
            self.promise = promise
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            promise.fail(ChannelError.eof)
        }
    }
}
