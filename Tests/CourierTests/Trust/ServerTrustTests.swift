import Courier
import CourierNIO
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Server trust settings (``ServerTrustManager``, trust roots, client certificates) against the
/// test server in TLS mode, with certificates made for each test. Over AsyncHTTPClient every
/// setting applies; over URLSession on Linux (FoundationNetworking has no trust API) every
/// request with one fails before connecting, and never goes out unchecked.
@Suite struct ServerTrustTests {
    /// A CA, a server certificate from it for 127.0.0.1, and a server presenting it.
    struct Fixture {
        let authority: TestCertificateAuthority
        let root: TLSCertificate
        let server: TestCertificateAuthority.Issued
        let serverCertificate: TLSCertificate
        /// Another authority's certificate, which has nothing to do with the server: a pin that
        /// must not match.
        let stranger: TLSCertificate

        init(
            authority: TestCertificateAuthority? = nil,
            validity: ClosedRange<Date>? = nil,
            names: [String] = ["localhost"],
            ipAddresses: [String] = ["127.0.0.1"],
            ocspResponder: URL? = nil
        ) throws {
            let authority = try authority ?? TestCertificateAuthority()
            self.authority = authority
            root = try TLSCertificate(pemEncoded: authority.certificatePEM)
            server = try authority.issue(
                names: names,
                ipAddresses: ipAddresses,
                validity: validity,
                ocspResponder: ocspResponder
            )
            serverCertificate = try TLSCertificate(pemEncoded: server.certificatePEM)
            stranger = try TLSCertificate(pemEncoded: TestCertificateAuthority(name: "Stranger CA").certificatePEM)
        }

        func tls(requiringClientCertificatesFrom issuers: String? = nil) -> TestServer.TLS {
            TestServer.TLS(
                certificateChain: server.chainPEM,
                privateKey: server.privateKeyPEM,
                requiredClientCertificateIssuers: issuers
            )
        }
    }

    /// Runs `body` with a TLS server presenting `tls`.
    static func withServer(
        _ tls: TestServer.TLS,
        _ body: (TestServer) async throws -> Void
    ) async throws {
        try await TestServer.withRunningServer(configuration: TestServer.Configuration { $0.tls = tls }, body)
    }

    /// Expects `request` to fail with a trust failure for 127.0.0.1 before the server saw it;
    /// returns the reason. Over URLSession on Linux the reason is always `.unsupported`.
    static func trustFailure(
        of request: DataRequest,
        server: TestServer,
        requestsBefore: Int = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CourierError.ServerTrustFailureReason? {
        let error = try #require(await failure(of: request), sourceLocation: sourceLocation)
        #expect(error.kind == .serverTrustEvaluationFailed, "\(error)", sourceLocation: sourceLocation)
        await #expect(throws: TestServerError.timedOut, "no request got through", sourceLocation: sourceLocation) {
            try await server.waitForRequests(requestsBefore + 1, timeout: .milliseconds(100))
        }
        return error.serverTrustFailureReason
    }

    /// Expects `request` refused because no key of the server's chain is pinned, and returns the
    /// pins the refusal names; `nil` over URLSession on Linux, where the settings cannot be applied.
    static func pinsSeen(
        refusing request: DataRequest,
        server: TestServer,
        transport: TransportKind,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String]? {
        let reason = try await trustFailure(of: request, server: server, sourceLocation: sourceLocation)
        if isUnsupportedOverFoundationNetworking(reason, transport) { return nil }
        guard case .publicKeyPinningFailed(let host, let seen) = reason else {
            Issue.record("got \(String(describing: reason))", sourceLocation: sourceLocation)
            return nil
        }
        #expect(host == "127.0.0.1", sourceLocation: sourceLocation)
        return seen
    }

    /// Expects `session`'s `/get` to succeed (over `protocolName`, if given), or, over URLSession on
    /// Linux, to fail before connecting because the settings cannot be applied there.
    static func expectTrusted(
        _ session: Session,
        server: TestServer,
        transport: TransportKind,
        over protocolName: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        if TransportKind.urlSessionIsFoundationNetworking, transport == .urlSession {
            let reason = try await trustFailure(
                of: session.request(server.url("/get")),
                server: server,
                sourceLocation: sourceLocation
            )
            _ = isUnsupportedOverFoundationNetworking(reason, transport)
            return
        }
        let response = await session.request(server.url("/get")).validate().serializingData().response
        #expect(response.error == nil, "\(String(describing: response.error))", sourceLocation: sourceLocation)
        if let protocolName {
            #expect(response.metrics?.networkProtocolName == protocolName, sourceLocation: sourceLocation)
        }
    }

    /// Whether `reason` is URLSession on Linux saying it cannot apply the settings.
    static func isUnsupportedOverFoundationNetworking(
        _ reason: CourierError.ServerTrustFailureReason?,
        _ transport: TransportKind
    ) -> Bool {
        guard transport == .urlSession, TransportKind.urlSessionIsFoundationNetworking else { return false }
        guard case .unsupported(let host, let text) = reason else {
            Issue.record("expected .unsupported, got \(String(describing: reason))")
            return true
        }
        #expect(host == "127.0.0.1")
        #expect(text.contains("FoundationNetworking"))
        return true
    }

    @Test(arguments: TransportKind.allCases)
    func aServerChainingToACustomRootIsTrustedAndOthersAreNot(transport: TransportKind) async throws {
        let fixture = try Fixture()
        try await Self.withServer(fixture.tls()) { server in
            let session = transport.makeSession { $0.trustRoots = .only([fixture.root]) }
            try await Self.expectTrusted(session, server: server, transport: transport, over: "h2")
            // Another CA's roots only: the same server is refused, with the reason.
            let other = try TLSCertificate(pemEncoded: TestCertificateAuthority(name: "Other CA").certificatePEM)
            let strict = transport.makeSession { $0.trustRoots = .systemAnd([other]) }
            let isFoundationNetworking = TransportKind.urlSessionIsFoundationNetworking && transport == .urlSession
            let reason = try await Self.trustFailure(
                of: strict.request(server.url("/get")),
                server: server,
                requestsBefore: isFoundationNetworking ? 0 : 1
            )
            if !Self.isUnsupportedOverFoundationNetworking(reason, transport) {
                guard case .certificateRejected(let host, let problem) = reason else {
                    Issue.record("got \(String(describing: reason))")
                    return
                }
                #expect(host == "127.0.0.1")
                #expect(
                    problem.contains("leads to CN=Courier Test CA, which is not among the roots the session trusts")
                )
            }
            await session.invalidate()
            await strict.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func expiredAndOtherHostsCertificatesAreRefused(transport: TransportKind) async throws {
        let authority = try TestCertificateAuthority()
        let now = Date()
        let expired = try Fixture(authority: authority, validity: (now - 20 * 86_400)...(now - 10 * 86_400))
        let otherHost = try Fixture(authority: authority, names: ["other.example"], ipAddresses: [])
        for (fixture, expectation) in [(expired, "expired on"), (otherHost, "another host")] {
            try await Self.withServer(fixture.tls()) { server in
                let session = transport.makeSession { $0.trustRoots = .only([fixture.root]) }
                let reason = try await Self.trustFailure(of: session.request(server.url("/get")), server: server)
                if !Self.isUnsupportedOverFoundationNetworking(reason, transport) {
                    guard case .certificateRejected(_, let problem) = reason else {
                        Issue.record("got \(String(describing: reason))")
                        return
                    }
                    #expect(problem.contains(expectation), "\(problem)")
                }
                await session.invalidate()
            }
        }
    }

    /// A refused chain is described by what is wrong with it: an intermediate the server did not
    /// send, an intermediate out of its dates, a root the session does not trust, each named.
    @Test(arguments: TransportKind.allCases)
    func aRefusedChainSaysWhichCertificateIsAtFault(transport: TransportKind) async throws {
        let root = try TestCertificateAuthority()
        let rootCertificate = try TLSCertificate(pemEncoded: root.certificatePEM)
        let now = Date()
        let intermediate = try Fixture(authority: root.intermediate())
        let expiredIntermediate = try Fixture(
            authority: root.intermediate(
                name: "Lapsed Intermediate",
                validity: (now - 20 * 86_400)...(now - 10 * 86_400)
            )
        )
        let withoutIntermediate = TestServer.TLS(
            certificateChain: intermediate.server.certificatePEM,
            privateKey: intermediate.server.privateKeyPEM
        )
        // An intermediate of the right name but another key.
        let withAnotherIntermediate = TestServer.TLS(
            certificateChain: intermediate.server.certificatePEM + (try root.intermediate().certificatePEM),
            privateKey: intermediate.server.privateKeyPEM
        )
        let cases: [(TestServer.TLS, TrustRoots, String)] = [
            (
                withoutIntermediate, .only([rootCertificate]),
                "leads to CN=Courier Test Intermediate CA, which is not among the roots the session trusts, and whose "
                    + "certificate the server did not send"
            ),
            (
                expiredIntermediate.tls(), .only([rootCertificate]),
                "the certificate it is issued through, CN=Lapsed Intermediate, expired on"
            ),
            (
                withAnotherIntermediate, .only([rootCertificate]),
                "the server sent a certificate for CN=Courier Test Intermediate CA, but not the one that issued CN=localhost"
            ),
            (
                intermediate.tls(), .only([intermediate.stranger]),
                "its chain leads to CN=Courier Test CA, which is not among the roots the session trusts"
            ),
        ]
        for (tls, roots, expected) in cases {
            try await Self.withServer(tls) { server in
                let session = transport.makeSession { $0.trustRoots = roots }
                let reason = try await Self.trustFailure(of: session.request(server.url("/get")), server: server)
                if !Self.isUnsupportedOverFoundationNetworking(reason, transport) {
                    guard case .certificateRejected(_, let problem) = reason else {
                        Issue.record("got \(String(describing: reason))")
                        return
                    }
                    #expect(problem.contains(expected), "\(problem)")
                }
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aPinnedPublicKeyLetsTheServerThroughOverHTTP2AndAnotherDoesNot(transport: TransportKind) async throws {
        let fixture = try Fixture()
        try await Self.withServer(fixture.tls()) { server in
            let pinned = transport.makeSession {
                $0.trustRoots = .only([fixture.root])
                $0.serverTrustManager = ServerTrustManager(evaluators: [
                    "127.0.0.1": PublicKeysTrustEvaluator(pins: [fixture.serverCertificate.publicKeyPin])
                ])
            }
            let wrongPin = transport.makeSession {
                $0.trustRoots = .only([fixture.root])
                $0.serverTrustManager = ServerTrustManager(evaluators: [
                    "127.0.0.1": PublicKeysTrustEvaluator(keysOf: [fixture.stranger])
                ])
            }
            if let seen = try await Self.pinsSeen(
                refusing: wrongPin.request(server.url("/get")),
                server: server,
                transport: transport
            ) {
                // The chain the server was accepted through: its certificate, then the root.
                #expect(seen == [fixture.serverCertificate.publicKeyPin, fixture.root.publicKeyPin])
                let response = await pinned.request(server.url("/get")).validate().serializingData().response
                #expect(response.error == nil, "\(String(describing: response.error))")
                #expect(response.metrics?.networkProtocolName == "h2")
            }
            await pinned.invalidate()
            await wrongPin.invalidate()
        }
    }

    /// A pinned CA certificate with self-signed certificates accepted is the only root the
    /// server may chain to, through the intermediate it sends. (An intermediate cannot be the
    /// anchor over AsyncHTTPClient: BoringSSL wants a self-signed one, and SwiftNIO does not
    /// expose its partial-chain flag.)
    @Test(arguments: TransportKind.allCases)
    func aPinnedCAWithSelfSignedAcceptedIsTheOnlyRoot(transport: TransportKind) async throws {
        let root = try TestCertificateAuthority()
        let intermediate = try root.intermediate()
        let fixture = try Fixture(authority: intermediate)
        let rootCertificate = try TLSCertificate(pemEncoded: root.certificatePEM)
        let otherRoot = try TLSCertificate(pemEncoded: TestCertificateAuthority().certificatePEM)
        try await Self.withServer(fixture.tls()) { server in
            let session = transport.makeSession {
                $0.serverTrustManager = ServerTrustManager(evaluators: [
                    "127.0.0.1": PinnedCertificatesTrustEvaluator(
                        certificates: [rootCertificate],
                        acceptSelfSignedCertificates: true
                    )
                ])
            }
            // The session's own roots do not count beside the pinned ones.
            let pinnedElsewhere = transport.makeSession {
                $0.trustRoots = .systemAnd([rootCertificate])
                $0.serverTrustManager = ServerTrustManager(evaluators: [
                    "127.0.0.1": PinnedCertificatesTrustEvaluator(
                        certificates: [otherRoot],
                        acceptSelfSignedCertificates: true
                    )
                ])
            }
            let refused = try await Self.trustFailure(of: pinnedElsewhere.request(server.url("/get")), server: server)
            if !Self.isUnsupportedOverFoundationNetworking(refused, transport) {
                guard case .certificateRejected = refused else {
                    Issue.record("got \(String(describing: refused))")
                    return
                }
            }
            await pinnedElsewhere.invalidate()
            try await Self.expectTrusted(session, server: server, transport: transport)
            await session.invalidate()
        }
    }

    /// A pin matches any certificate of the chain the server was accepted through: the
    /// intermediate it sends, and the root it chains to, which it does not send.
    @Test(arguments: TransportKind.allCases)
    func aPinOnTheIntermediateOrTheRootMatchesTheValidatedChain(transport: TransportKind) async throws {
        let root = try TestCertificateAuthority()
        let intermediate = try root.intermediate()
        let fixture = try Fixture(authority: intermediate)
        let intermediateCertificate = try TLSCertificate(pemEncoded: intermediate.certificatePEM)
        let rootCertificate = try TLSCertificate(pemEncoded: root.certificatePEM)
        try await Self.withServer(fixture.tls()) { server in
            func session(_ evaluator: any ServerTrustEvaluating) -> Session {
                transport.makeSession {
                    $0.trustRoots = .only([rootCertificate])
                    $0.serverTrustManager = ServerTrustManager(evaluators: ["127.0.0.1": evaluator])
                }
            }
            let sessions = [
                session(PublicKeysTrustEvaluator(keysOf: [intermediateCertificate])),
                session(PublicKeysTrustEvaluator(keysOf: [rootCertificate])),
                session(PinnedCertificatesTrustEvaluator(certificates: [intermediateCertificate])),
            ]
            let wrongPin = session(PublicKeysTrustEvaluator(keysOf: [fixture.stranger]))
            let seen = try await Self.pinsSeen(
                refusing: wrongPin.request(server.url("/get")),
                server: server,
                transport: transport
            )
            if let seen {
                #expect(
                    seen == [fixture.serverCertificate, intermediateCertificate, rootCertificate].map(\.publicKeyPin)
                )
            }
            for pinned in sessions {
                try await Self.expectTrusted(pinned, server: server, transport: transport)
                await pinned.invalidate()
            }
            await wrongPin.invalidate()
        }
    }

    /// An evaluator of the caller's is shown the whole chain, the server's certificate first and
    /// the root last, as a `SecTrust` would show it.
    @Test func aCustomEvaluatorIsShownTheWholeChain() async throws {
        let root = try TestCertificateAuthority()
        let intermediate = try root.intermediate()
        let fixture = try Fixture(authority: intermediate)
        let expected = try [
            fixture.serverCertificate,
            TLSCertificate(pemEncoded: intermediate.certificatePEM),
            TLSCertificate(pemEncoded: root.certificatePEM),
        ]
        final class Recorder: ServerTrustEvaluating {
            let shown = TestLock<[[TLSCertificate]]>([])
            func evaluate(_ trust: ServerTrust) throws { shown.withLock { $0.append(trust.certificates) } }
        }
        let recorder = Recorder()
        try await Self.withServer(fixture.tls()) { server in
            let session = TransportKind.asyncHTTPClient.makeSession {
                $0.trustRoots = .only([expected[2]])
                $0.serverTrustManager = ServerTrustManager(evaluators: ["127.0.0.1": recorder])
            }
            let response = await session.request(server.url("/get")).validate().serializingData().response
            #expect(response.error == nil, "\(String(describing: response.error))")
            #expect(recorder.shown.withLock { $0 } == [expected])
            await session.invalidate()
        }
    }

    /// With the chain unchecked (no default validation, no host check), a pin on an issuer still
    /// means that the pinned key signed the server's certificate: a server that merely sends the
    /// pinned certificate along is refused.
    @Test(arguments: TransportKind.allCases)
    func withoutChainChecksAnIssuersPinCountsOnlyWhenItsKeySignedTheCertificate(
        transport: TransportKind
    ) async throws {
        let intermediate = try TestCertificateAuthority().intermediate()
        let intermediateCertificate = try TLSCertificate(pemEncoded: intermediate.certificatePEM)
        let signed = try Fixture(authority: intermediate)
        // Another key under the intermediate's very name: only the signature tells them apart.
        let unrelated = try Fixture(authority: TestCertificateAuthority(name: "Courier Test Intermediate CA"))
        let evaluator = PublicKeysTrustEvaluator(
            keysOf: [intermediateCertificate],
            performDefaultValidation: false,
            validateHost: false
        )
        // A server whose certificate another authority issued, sending the pinned one after it.
        let impostor = TestServer.TLS(
            certificateChain: unrelated.server.certificatePEM + intermediate.certificatePEM,
            privateKey: unrelated.server.privateKeyPEM
        )
        try await Self.withServer(impostor) { server in
            let session = transport.makeSession {
                $0.serverTrustManager = ServerTrustManager(evaluators: ["127.0.0.1": evaluator])
            }
            let refused = try await Self.trustFailure(of: session.request(server.url("/get")), server: server)
            if !Self.isUnsupportedOverFoundationNetworking(refused, transport) {
                guard case .publicKeyPinningFailed(_, let seen) = refused else {
                    Issue.record("got \(String(describing: refused))")
                    return
                }
                #expect(seen == [unrelated.serverCertificate.publicKeyPin])
            }
            await session.invalidate()
        }
        try await Self.withServer(signed.tls()) { server in
            let session = transport.makeSession {
                $0.serverTrustManager = ServerTrustManager(evaluators: ["127.0.0.1": evaluator])
            }
            try await Self.expectTrusted(session, server: server, transport: transport)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anUnlistedHostFailsWhenAllHostsMustBeEvaluated(transport: TransportKind) async throws {
        let fixture = try Fixture()
        try await Self.withServer(fixture.tls()) { server in
            let session = transport.makeSession {
                $0.trustRoots = .only([fixture.root])
                $0.serverTrustManager = ServerTrustManager(evaluators: ["*.example.org": DefaultTrustEvaluator()])
            }
            let reason = try await Self.trustFailure(of: session.request(server.url("/get")), server: server)
            guard case .noRequiredEvaluator(let host) = reason else {
                Issue.record("got \(String(describing: reason))")
                return
            }
            #expect(host == "127.0.0.1")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func mutualTLSSendsTheClientCertificateAndFailsClearlyWithoutOne(transport: TransportKind) async throws {
        let fixture = try Fixture()
        let client = try fixture.authority.issueClientCertificate()
        let identity = try ClientCertificate(
            certificateChain: TLSCertificate.certificates(pemEncoded: client.chainPEM),
            privateKey: TLSPrivateKey(pemEncoded: client.privateKeyPEM)
        )
        try await Self.withServer(fixture.tls(requiringClientCertificatesFrom: fixture.authority.certificatePEM)) {
            server in
            let withCertificate = transport.makeSession {
                $0.trustRoots = .only([fixture.root])
                $0.clientCertificate = identity
            }
            let without = transport.makeSession { $0.trustRoots = .only([fixture.root]) }
            // A client certificate from an authority the server does not take.
            let strangers = try TestCertificateAuthority(name: "Stranger CA").issueClientCertificate()
            let wrongCertificate = transport.makeSession {
                $0.trustRoots = .only([fixture.root])
                $0.clientCertificate = try? ClientCertificate(
                    certificateChain: TLSCertificate.certificates(pemEncoded: strangers.chainPEM),
                    privateKey: TLSPrivateKey(pemEncoded: strangers.privateKeyPEM)
                )
            }
            try await Self.expectTrusted(withCertificate, server: server, transport: transport)
            // Under TLS 1.3 the server refuses the client after the client's side of the handshake,
            // and AsyncHTTPClient sees the connection close: Courier asks the server again to say why.
            for (session, expected) in [(without, "has none"), (wrongCertificate, "does not accept")] {
                let reason = try await Self.trustFailure(
                    of: session.request(server.url("/get")),
                    server: server,
                    requestsBefore: TransportKind.urlSessionIsFoundationNetworking && transport == .urlSession ? 0 : 1
                )
                if !Self.isUnsupportedOverFoundationNetworking(reason, transport) {
                    guard case .clientCertificateRefused(let host, let problem) = reason else {
                        Issue.record("got \(String(describing: reason))")
                        continue
                    }
                    #expect(host == "127.0.0.1")
                    #expect(problem.contains(expected), "\(problem)")
                }
            }
            await wrongCertificate.invalidate()
            await withCertificate.invalidate()
            await without.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func disabledEvaluationTrustsAnyServer(transport: TransportKind) async throws {
        let fixture = try Fixture()
        try await Self.withServer(fixture.tls()) { server in
            let disabled = transport.makeSession {
                $0.serverTrustManager = ServerTrustManager(evaluators: ["127.0.0.1": DisabledTrustEvaluator()])
            }
            try await Self.expectTrusted(disabled, server: server, transport: transport)
            await disabled.invalidate()
        }
    }

    @Test func eachRedirectHopIsEvaluatedForItsOwnHost() async throws {
        let fixture = try Fixture()
        try await Self.withServer(fixture.tls()) { server in
            let pin = fixture.serverCertificate.publicKeyPin
            let target = "https://localhost:\(server.port)/get"
            let path = "/redirect-to?url=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let unlisted = TransportKind.asyncHTTPClient.makeSession {
                $0.trustRoots = .only([fixture.root])
                $0.serverTrustManager = ServerTrustManager(evaluators: [
                    "127.0.0.1": PublicKeysTrustEvaluator(pins: [pin])
                ])
            }
            let error = try #require(await failure(of: unlisted.request(server.url(path))))
            guard case .noRequiredEvaluator(let host) = error.serverTrustFailureReason else {
                Issue.record("got \(error)")
                return
            }
            #expect(host == "localhost")
            let pinnedElsewhere = TransportKind.asyncHTTPClient.makeSession {
                $0.trustRoots = .only([fixture.root])
                $0.serverTrustManager = ServerTrustManager(evaluators: [
                    "127.0.0.1": PublicKeysTrustEvaluator(pins: [pin]),
                    "localhost": PublicKeysTrustEvaluator(keysOf: [fixture.stranger]),
                ])
            }
            let refused = try #require(await failure(of: pinnedElsewhere.request(server.url(path))))
            guard case .publicKeyPinningFailed(let refusedHost, _) = refused.serverTrustFailureReason else {
                Issue.record("got \(refused)")
                return
            }
            #expect(refusedHost == "localhost")
            // Each first hop reached the server; no second hop did.
            try await server.waitForRequests(2, timeout: .seconds(5))
            await #expect(throws: TestServerError.timedOut, "no redirected request got through") {
                try await server.waitForRequests(3, timeout: .milliseconds(100))
            }
            await unlisted.invalidate()
            await pinnedElsewhere.invalidate()
        }
    }

    /// Sessions sharing one transport with different pins for one host never share a connection,
    /// over HTTP/1.1 and HTTP/2; a refused connection is closed, and the transport shuts down cleanly.
    @Test(arguments: [true, false])
    func sessionsPinningAlikeHostDifferentlyOverOneTransportKeepApart(offersHTTP2: Bool) async throws {
        let fixture = try Fixture()
        var tls = fixture.tls()
        tls.offersHTTP2 = offersHTTP2
        try await Self.withServer(tls) { server in
            let transport = AsyncHTTPClientTransport()
            func session(pinning certificate: TLSCertificate) -> Session {
                Session(
                    configuration: .init {
                        $0.trustRoots = .only([fixture.root])
                        $0.serverTrustManager = ServerTrustManager(evaluators: [
                            "127.0.0.1": PublicKeysTrustEvaluator(keysOf: [certificate])
                        ])
                    },
                    transport: transport
                )
            }
            let right = session(pinning: fixture.serverCertificate)
            let wrong = session(pinning: fixture.stranger)
            for round in 0..<3 {
                let response = await right.request(server.url("/get")).validate().serializingData().response
                #expect(response.error == nil, "round \(round): \(String(describing: response.error))")
                #expect(response.metrics?.networkProtocolName == (offersHTTP2 ? "h2" : "http/1.1"))
                let error = try #require(await failure(of: wrong.request(server.url("/get"))))
                #expect(error.serverTrustFailureReason.map { "\($0)" }?.contains("publicKeyPinningFailed") == true)
            }
            try await server.waitForRequests(3, timeout: .seconds(5))
            await #expect(throws: TestServerError.timedOut, "only the right session's requests got through") {
                try await server.waitForRequests(4, timeout: .milliseconds(100))
            }
            await transport.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func evaluatorsWithRootsOfTheirOwnCannotBeCombined(transport: TransportKind) async throws {
        let fixture = try Fixture()
        let other = try TLSCertificate(pemEncoded: TestCertificateAuthority().certificatePEM)
        try await Self.withServer(fixture.tls()) { server in
            let session = transport.makeSession {
                $0.serverTrustManager = ServerTrustManager(evaluators: [
                    "127.0.0.1": CompositeTrustEvaluator(evaluators: [
                        PinnedCertificatesTrustEvaluator(
                            certificates: [fixture.root],
                            acceptSelfSignedCertificates: true
                        ),
                        PinnedCertificatesTrustEvaluator(certificates: [other], acceptSelfSignedCertificates: true),
                    ])
                ])
            }
            let reason = try await Self.trustFailure(of: session.request(server.url("/get")), server: server)
            guard case .unsupported(_, let text) = reason else {
                Issue.record("got \(String(describing: reason))")
                return
            }
            #expect(text.contains("CompositeTrustEvaluator"))
            await session.invalidate()
        }
    }

    /// A manager that asks for no more than the default checks stops no transport (URLSession
    /// included): the request goes out, and the system's checks refuse the test CA as ever.
    @Test(arguments: TransportKind.allCases)
    func settingsEqualToTheDefaultPassOnEveryTransport(transport: TransportKind) async throws {
        let fixture = try Fixture()
        try await Self.withServer(fixture.tls()) { server in
            let session = transport.makeSession {
                $0.serverTrustManager = ServerTrustManager(evaluators: ["127.0.0.1": DefaultTrustEvaluator()])
            }
            let error = try #require(await failure(of: session.request(server.url("/get"))))
            #expect(error.kind == .transportFailed, "\(error)")
            #expect(error.urlError?.code == .serverCertificateUntrusted)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func plainHTTPIsNotEvaluated(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession {
                $0.serverTrustManager = ServerTrustManager(evaluators: [:])
            }
            let response = await session.request(server.url("/get")).validate().serializingData().response
            #expect(response.error == nil, "\(String(describing: response.error))")
            await session.invalidate()
        }
    }
}
