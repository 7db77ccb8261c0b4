import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `RevocationTrustEvaluator` against the test server's OCSP responder (`POST /ocsp`), with
/// certificates that name it. Over AsyncHTTPClient Courier asks the responder after the
/// handshake; over URLSession on Linux every such request fails before connecting.
@Suite struct RevocationTests {
    private typealias Fixture = ServerTrustTests.Fixture

    /// Runs `body` with an OCSP responder for a new authority, served by a plain test server.
    private static func withResponder(
        _ body: (TestCertificateAuthority, TestCertificateAuthority.OCSPResponder, TestServer) async throws -> Void
    ) async throws {
        let authority = try TestCertificateAuthority()
        let responder = TestCertificateAuthority.OCSPResponder(authority: authority)
        try await TestServer.withRunningServer(configuration: TestServer.Configuration { $0.ocspResponder = responder })
        {
            try await body(authority, responder, $0)
        }
    }

    private static func session(
        _ transport: TransportKind,
        trusting fixture: Fixture,
        options: RevocationTrustEvaluator.Options = .any
    ) -> Session {
        session(transport, trusting: fixture, RevocationTrustEvaluator(options: options))
    }

    private static func session(
        _ transport: TransportKind,
        trusting fixture: Fixture,
        _ evaluator: any ServerTrustEvaluating
    ) -> Session {
        transport.makeSession {
            $0.trustRoots = .only([fixture.root])
            $0.serverTrustManager = ServerTrustManager(evaluators: ["127.0.0.1": evaluator])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aGoodCertificatePassesAndARevokedOneIsRefused(transport: TransportKind) async throws {
        try await Self.withResponder { authority, responder, ocsp in
            let good = try Fixture(authority: authority, ocspResponder: ocsp.url("/ocsp"))
            let revoked = try Fixture(authority: authority, ocspResponder: ocsp.url("/ocsp"))
            try responder.revoke(revoked.server)
            try await ServerTrustTests.withServer(good.tls()) { server in
                let session = Self.session(transport, trusting: good, options: [.ocsp, .requirePositiveResponse])
                try await ServerTrustTests.expectTrusted(session, server: server, transport: transport)
                await session.invalidate()
            }
            let isFoundationNetworking = TransportKind.urlSessionIsFoundationNetworking && transport == .urlSession
            #expect(ocsp.attempts(forKey: "ocsp") == (isFoundationNetworking ? 0 : 1))
            try await ServerTrustTests.withServer(revoked.tls()) { server in
                let session = Self.session(transport, trusting: revoked)
                let reason = try await ServerTrustTests.trustFailure(
                    of: session.request(server.url("/get")),
                    server: server
                )
                if !ServerTrustTests.isUnsupportedOverFoundationNetworking(reason, transport) {
                    guard case .certificateRejected(let host, let problem) = reason else {
                        Issue.record("got \(String(describing: reason))")
                        return
                    }
                    #expect(host == "127.0.0.1")
                    // swift-certificates' words, which Courier tells a revocation apart by.
                    #expect(problem.contains("has been revoked (revoked through OCSP"), "\(problem)")
                }
                await session.invalidate()
            }
        }
    }

    /// A responder that cannot be reached lets the server through by default (a best attempt,
    /// as Apple's checks and Alamofire's default make it), and refuses it when a positive answer
    /// is required.
    @Test(arguments: TransportKind.allCases)
    func anUnreachableResponderRefusesOnlyWhenAnAnswerIsRequired(transport: TransportKind) async throws {
        let closed = try ClosedPort()
        let fixture = try Fixture(ocspResponder: URL(string: "http://127.0.0.1:\(closed.port)/ocsp"))
        try await ServerTrustTests.withServer(fixture.tls()) { server in
            let bestAttempt = Self.session(transport, trusting: fixture)
            try await ServerTrustTests.expectTrusted(bestAttempt, server: server, transport: transport)
            let strict = Self.session(transport, trusting: fixture, options: [.ocsp, .requirePositiveResponse])
            let reason = try await ServerTrustTests.trustFailure(
                of: strict.request(server.url("/get")),
                server: server,
                requestsBefore: TransportKind.urlSessionIsFoundationNetworking && transport == .urlSession ? 0 : 1
            )
            if !ServerTrustTests.isUnsupportedOverFoundationNetworking(reason, transport) {
                guard case .certificateRejected(_, let problem) = reason else {
                    Issue.record("got \(String(describing: reason))")
                    return
                }
                #expect(problem.contains("could not be confirmed"), "\(problem)")
            }
            await bestAttempt.invalidate()
            await strict.invalidate()
        }
    }

    /// Options no transport here can honour fail their requests before connecting, never
    /// checked more loosely.
    /// Combined, revocation checks allow only the methods every one allows, and require what
    /// any requires.
    @Test func combinedRevocationChecksAreTheStrictest() {
        let combined = CompositeTrustEvaluator(evaluators: [
            RevocationTrustEvaluator(options: .any),
            RevocationTrustEvaluator(options: [.ocsp, .requirePositiveResponse]),
            DefaultTrustEvaluator(),
        ]).handshakeChecks
        #expect(combined.checksRevocation)
        #expect(combined.revocationOptions == [.ocsp, .requirePositiveResponse])
    }

    @Test(arguments: TransportKind.allCases)
    func optionsCourierCannotHonourFailAtOnce(transport: TransportKind) async throws {
        let fixture = try Fixture()
        try await ServerTrustTests.withServer(fixture.tls()) { server in
            let cases: [(any ServerTrustEvaluating, String)] = [
                (RevocationTrustEvaluator(options: .crl), "CRL"),
                (RevocationTrustEvaluator(options: [.ocsp, .networkAccessDisabled]), "networkAccessDisabled"),
                (RevocationTrustEvaluator(performDefaultValidation: false, validateHost: false), "validates none"),
                // One evaluator wants CRLs: another's OCSP does not satisfy it.
                (
                    CompositeTrustEvaluator(evaluators: [
                        RevocationTrustEvaluator(options: .crl), RevocationTrustEvaluator(options: .ocsp),
                    ]), "CRL"
                ),
            ]
            for (evaluator, expected) in cases {
                let session = Self.session(transport, trusting: fixture, evaluator)
                let reason = try await ServerTrustTests.trustFailure(
                    of: session.request(server.url("/get")),
                    server: server
                )
                if !ServerTrustTests.isUnsupportedOverFoundationNetworking(reason, transport) {
                    guard case .unsupported(_, let text) = reason else {
                        Issue.record("got \(String(describing: reason))")
                        return
                    }
                    #expect(text.contains(expected), "\(text)")
                }
                await session.invalidate()
            }
        }
    }
}
