import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// One more TLS handshake with a server, to read every certificate it presents: AsyncHTTPClient's
/// TLS handler shows only the server's own certificate once a handshake is done, and takes no
/// verification callback (its issue #285), which is where the rest of the chain is visible.
///
/// The probe connects, takes the certificates from its verification callback, lets the handshake
/// finish, and closes (at once if the handshake fails after the certificates came). Nothing is
/// sent on the connection. What it reads is only ever a candidate: a certificate the probe
/// returns counts for a request only when signatures tie it to the certificate that request's own
/// connection proved (see `CertificateChain`), so a server that shows something else the second
/// time gains nothing.
enum ServerCertificateProbe {
    /// The longest a probe may take, connection included: as long as a handshake over a slow
    /// network may take, since a probe that fails leaves a policy only the server's certificate
    /// (a pin on an intermediate is then not seen), within the connection's own 30 s.
    static let timeout = TimeAmount.seconds(10)

    /// A context for probes: `tls`'s versions, ciphers, curves, signature algorithms and ALPN, so
    /// that a server holding several certificates (RSA and ECDSA, say) shows the one it shows a
    /// connection made with `tls`, but no client certificate, and checks the callback replaces
    /// (with no roots to load; `.none` verification would skip the callback).
    static func context(like tls: TLSConfiguration) throws -> NIOSSLContext {
        var configuration = tls
        configuration.certificateVerification = .noHostnameVerification
        configuration.trustRoots = .certificates([])
        configuration.additionalTrustRoots = []
        configuration.certificateChain = []
        configuration.privateKey = nil
        return try NIOSSLContext(configuration: configuration)
    }

    /// The certificates the server at `address` presents for `serverName`, its own first; an
    /// error if no handshake got that far within ``timeout``.
    static func presentedCertificates(
        at address: SocketAddress,
        serverName: String?,
        context: NIOSSLContext,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<[NIOSSLCertificate]> {
        presentedCertificates(serverName: serverName, context: context, on: eventLoop) { $0.connect(to: address) }
    }

    /// The certificates the server at `host` and `port` presents (its name sent unless it is an
    /// IP address) to a connection made with `context`, its own first; an error if no handshake
    /// got that far within ``timeout``.
    static func presentedCertificates(
        host: String,
        port: Int,
        context: NIOSSLContext,
        on eventLoop: any EventLoop
    ) -> EventLoopFuture<[NIOSSLCertificate]> {
        presentedCertificates(serverName: isIPAddress(host) ? nil : host, context: context, on: eventLoop) {
            $0.connect(host: host, port: port)
        }
    }

    /// What the server at `host` and `port` says once a handshake made with `configuration` is
    /// done: the error its alert raised within `wait` (under TLS 1.3 a server refuses a client
    /// certificate, or its absence, only after the client's side of the handshake), or `nil` if it
    /// said nothing. An error if no handshake got that far within ``timeout``.
    static func alertAfterHandshake(
        host: String,
        port: Int,
        configuration: TLSConfiguration,
        on eventLoop: any EventLoop,
        wait: TimeAmount = .seconds(1)
    ) -> EventLoopFuture<String?> {
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return handshake(
            serverName: isIPAddress(host) ? nil : host,
            within: timeout + wait,
            on: eventLoop,
            connect: { $0.connect(host: host, port: port) },
            makeWatcher: { AlertWatcher(promise: $0, wait: wait) },
            makeTLS: { _, serverName in try NIOSSLClientHandler(context: context, serverHostname: serverName) }
        )
    }

    private static func presentedCertificates(
        serverName: String?,
        context: NIOSSLContext,
        on eventLoop: any EventLoop,
        connect: @escaping (ClientBootstrap) -> EventLoopFuture<any Channel>
    ) -> EventLoopFuture<[NIOSSLCertificate]> {
        handshake(
            serverName: serverName,
            within: timeout,
            on: eventLoop,
            connect: connect,
            makeWatcher: { Collector(promise: $0) },
            makeTLS: { collector, serverName in
                try NIOSSLClientHandler(context: context, serverHostname: serverName) { certificates, verdict in
                    collector.certificates = certificates
                    verdict.succeed(.certificateVerified)
                }
            }
        )
    }

    /// Connects (`connect`) and shakes hands with a TLS handler `makeTLS` makes, behind a watcher
    /// `makeWatcher` makes with the promise of the answer; answers with the winning channel's
    /// watcher (Happy Eyeballs may try several channels, each with its own), or fails after
    /// `limit`, and closes the connection once answered. The watcher is added first, so that it
    /// completes its promise when the channel goes away, even if the TLS handler cannot be made.
    private static func handshake<Watcher: ProbeWatcher>(
        serverName: String?,
        within limit: TimeAmount,
        on eventLoop: any EventLoop,
        connect: (ClientBootstrap) -> EventLoopFuture<any Channel>,
        makeWatcher: @escaping @Sendable (EventLoopPromise<Watcher.Answer>) -> Watcher,
        makeTLS: @escaping @Sendable (Watcher, String?) throws -> NIOSSLClientHandler
    ) -> EventLoopFuture<Watcher.Answer> {
        guard let bootstrap = ClientBootstrap(validatingGroup: eventLoop) else {
            return eventLoop.makeFailedFuture(ChannelError.badInterfaceAddressFamily)
        }
        let channel = connect(
            bootstrap
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let watcher = makeWatcher(channel.eventLoop.makePromise())
                        try channel.pipeline.syncOperations.addHandler(watcher)
                        try channel.pipeline.syncOperations.addHandler(
                            makeTLS(watcher, serverName),
                            position: .first
                        )
                    }
                }
        )
        let watched = channel.flatMap { channel -> EventLoopFuture<Watcher.Answer> in
            // On the channel's loop, the group's only one.
            do {
                return try channel.pipeline.syncOperations.handler(type: Watcher.self).promise.futureResult
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
        let answer = eventLoop.makePromise(of: Watcher.Answer.self)
        answer.completeWith(watched)
        let deadline = eventLoop.scheduleTask(in: limit) { answer.fail(ChannelError.connectTimeout(limit)) }
        answer.futureResult.whenComplete { _ in
            deadline.cancel()
            channel.whenSuccess { $0.close(promise: nil) }
        }
        return answer.futureResult
    }

    /// What probes read, by the name sent and the certificate the server proved on the connection
    /// that asked: a pool's connections to one server share one probe, and a server that changes
    /// its certificate is probed again. An answer is kept for ``Cache/lifetime``; a failure, or an
    /// answer that does not start with the proved certificate (a server that answers otherwise the
    /// second time), for ``Cache/failureLifetime`` only, so that such a server is not asked by every
    /// connection. Keyed without the address: the same certificate at another address is the same
    /// server, since what a probe reads counts only through signatures on that certificate.
    final class Cache: Sendable {
        private struct Key: Hashable {
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
        static let maximumEntries = 256
        private let entries = NIOLockedValueBox([Key: Entry]())

        /// The certificates the server at `address` presents for `serverName`, its own first,
        /// which must be `proved` (DER); probed unless a probe for the same is under way or kept.
        func presentedCertificates(
            at address: SocketAddress,
            serverName: String?,
            proved: [UInt8],
            context: NIOSSLContext,
            on eventLoop: any EventLoop
        ) -> EventLoopFuture<[NIOSSLCertificate]> {
            let key = Key(serverName: serverName, certificate: proved)
            let now = NIODeadline.now()
            let (certificates, promise) = entries.withLockedValue {
                entries -> (EventLoopFuture<[NIOSSLCertificate]>, EventLoopPromise<[NIOSSLCertificate]>?) in
                if let entry = entries[key], Self.isFresh(entry, at: now) { return (entry.certificates, nil) }
                if entries.count >= Self.maximumEntries {
                    entries = entries.filter { Self.isFresh($0.value, at: now) }
                    if entries.count >= Self.maximumEntries,
                        let oldest = entries.min(by: { $0.value.madeAt < $1.value.madeAt })?.key
                    {
                        entries[oldest] = nil
                    }
                }
                let promise = eventLoop.makePromise(of: [NIOSSLCertificate].self)
                entries[key] = Entry(certificates: promise.futureResult, madeAt: now)
                return (promise.futureResult, promise)
            }
            guard let promise else { return certificates }
            // Started outside the lock: a connection and its syscalls, and a future that has
            // failed already calls back at once.
            let probe = ServerCertificateProbe.presentedCertificates(
                at: address,
                serverName: serverName,
                context: context,
                on: eventLoop
            )
            .flatMapThrowing { certificates in
                guard let first = certificates.first, (try? first.toDERBytes()) == proved else {
                    throw ProbeError.anotherCertificate
                }
                return certificates
            }
            probe.whenFailure { [self] _ in
                entries.withLockedValue { entries in
                    if entries[key]?.certificates === certificates { entries[key]?.failed = true }
                }
            }
            promise.completeWith(probe)
            return certificates
        }

        private static func isFresh(_ entry: Entry, at now: NIODeadline) -> Bool {
            now - entry.madeAt < (entry.failed ? Self.failureLifetime : Self.lifetime)
        }
    }

    /// Why a probe's answer is not used.
    enum ProbeError: Error {
        /// The server showed another certificate than on the connection that asked.
        case anotherCertificate
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// Hands over the first error the connection raises once its handshake is done, or `nil`
    /// after `wait` without one (or when the connection ends quietly); a failure before the
    /// handshake is done fails it. Confined to its channel's event loop.
    /// A handler that completes a probe's answer.
    private protocol ProbeWatcher: ChannelInboundHandler, SendableMetatype {
        associatedtype Answer: Sendable
        var promise: EventLoopPromise<Answer> { get }
    }

    private final class AlertWatcher: ProbeWatcher {
        typealias InboundIn = NIOAny
        let promise: EventLoopPromise<String?>
        private let wait: TimeAmount
        private var isHandshakeDone = false

        init(promise: EventLoopPromise<String?>, wait: TimeAmount) {
            self.promise = promise
            self.wait = wait
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .handshakeCompleted = event as? TLSUserEvent {
                isHandshakeDone = true
                let promise = self.promise
                context.eventLoop.scheduleTask(in: wait) { promise.succeed(nil) }
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if isHandshakeDone { promise.succeed("\(error)") } else { promise.fail(error) }
            context.close(promise: nil)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            if isHandshakeDone { promise.succeed(nil) } else { promise.fail(ChannelError.eof) }
        }
    }

    /// Keeps what one connection's verification callback saw, and hands it over when the
    /// handshake is done, or when the connection fails or goes away (the certificates if they had
    /// come, else the failure). Confined to its channel's event loop.
    private final class Collector: ProbeWatcher {
        typealias InboundIn = NIOAny
        var certificates: [NIOSSLCertificate]?
        let promise: EventLoopPromise<[NIOSSLCertificate]>

        init(promise: EventLoopPromise<[NIOSSLCertificate]>) {
            self.promise = promise
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .handshakeCompleted = event as? TLSUserEvent { finish(failure: ChannelError.eof) }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            finish(failure: error)
            context.close(promise: nil)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            finish(failure: ChannelError.eof)
        }

        private func finish(failure: any Error) {
            if let certificates { promise.succeed(certificates) } else { promise.fail(failure) }
        }
    }
}
