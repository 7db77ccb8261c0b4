import AsyncHTTPClient
import CourierTestServer
import Foundation
import NIOCore
import Testing

@testable import Courier

/// Courier's Digest answers against the test server's `/digest-auth` routes: each side checks the
/// other. Requests go through plain AsyncHTTPClient, which neither answers challenges nor keeps
/// cookies, so each test sees exactly what the server sent and sends exactly what it computed.
@Suite struct DigestAuthenticationServerTests {
    private struct Answer {
        var status: UInt
        /// The `WWW-Authenticate` fields.
        var challenges: [String]
        var body: [UInt8]
    }

    private func send(
        _ server: TestServer,
        _ target: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: server.baseURL.absoluteString + target)
        request.headers.add(contentsOf: headers)
        if let body { request.body = .bytes(body) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(
            status: response.status.code,
            challenges: response.headers["WWW-Authenticate"],
            body: Array(bytes.readableBytesView)
        )
    }

    /// The challenge Courier would answer in a `401`'s `WWW-Authenticate` fields.
    private func preferredDigest(_ answer: Answer, bodyAvailable: Bool = true) throws -> DigestAuthentication {
        #expect(answer.status == 401)
        let challenges = answer.challenges.flatMap { AuthenticationChallenge.parse($0) }
        let choice = PreferredChallenge.strongest(in: challenges, bodyAvailable: bodyAvailable)
        guard case .digest(let digest) = choice else {
            throw DigestTestFailure.noDigestChallenge
        }
        return digest
    }

    private enum DigestTestFailure: Error {
        case noDigestChallenge
    }

    @Test(arguments: ["MD5", "SHA-256", "SHA-512"], ["auth", "auth-int", "both"])
    func courierAnswersTheServersChallenge(algorithm: String, qop: String) async throws {
        try await TestServer.withRunningServer { server in
            let target = "/digest-auth/\(qop)/ada/l0velace/\(algorithm)"
            let body = Array(#"{"engine": "analytical"}"#.utf8)
            let digest = try preferredDigest(try await send(server, target))
            #expect(digest.algorithm.name == algorithm)
            #expect(digest.realm == "me@kennethreitz.com")
            var counter = DigestAuthentication.NonceCounter()
            let authorization = try digest.authorization(
                username: "ada",
                password: "l0velace",
                method: .get,
                target: target,
                body: Data(body),
                nonceCount: counter.next(for: digest.nonce),
                clientNonce: DigestAuthentication.makeClientNonce()
            )
            let accepted = try await send(server, target, headers: [("Authorization", authorization)], body: body)
            #expect(accepted.status == 200)
            #expect(
                String(decoding: accepted.body, as: UTF8.self).replacingOccurrences(of: " ", with: "")
                    .contains(#""authenticated":true"#)
            )

            let wrong = try digest.authorization(
                username: "ada",
                password: "babbage",
                method: .get,
                target: target,
                body: Data(body),
                nonceCount: counter.next(for: digest.nonce),
                clientNonce: DigestAuthentication.makeClientNonce()
            )
            let refused = try await send(server, target, headers: [("Authorization", wrong)], body: body)
            #expect(refused.status == 401, "a wrong password is refused")
            #expect(try !preferredDigest(refused).isStale)
        }
    }

    /// With only `auth-int` offered and no body to hash, Courier has no Digest answer.
    @Test func authIntWithoutABodyHasNoAnswer() async throws {
        try await TestServer.withRunningServer { server in
            let first = try await send(server, "/digest-auth/auth-int/ada/pw/SHA-256")
            #expect(throws: DigestTestFailure.noDigestChallenge) {
                try preferredDigest(first, bodyAvailable: false)
            }
        }
    }

    /// A stale nonce: the server refuses a right answer with `stale=True` and a new nonce, which
    /// Courier reads, and the answer to the new nonce (counted from 1 again) is accepted.
    @Test func answersAStaleChallengeWithTheNewNonce() async throws {
        try await TestServer.withRunningServer { server in
            let target = "/digest-auth/auth/ada/pw/SHA-256/1"
            var counter = DigestAuthentication.NonceCounter()
            let first = try preferredDigest(try await send(server, target))
            func answer(_ digest: DigestAuthentication, cookie: String) throws -> [(String, String)] {
                let authorization = try digest.authorization(
                    username: "ada",
                    password: "pw",
                    method: .get,
                    target: target,
                    body: nil,
                    nonceCount: counter.next(for: digest.nonce),
                    clientNonce: DigestAuthentication.makeClientNonce()
                )
                return [("Authorization", authorization), ("Cookie", cookie)]
            }
            // httpbin counts down `stale_after` in a cookie; at 0 the nonce is stale.
            let staleAnswer = try await send(server, target, headers: try answer(first, cookie: "stale_after=0"))
            let renewed = try preferredDigest(staleAnswer)
            #expect(renewed.isStale)
            #expect(renewed.nonce != first.nonce)
            let accepted = try await send(server, target, headers: try answer(renewed, cookie: "stale_after=1"))
            #expect(accepted.status == 200)
            #expect(counter.next(for: renewed.nonce) == 2, "the new nonce was counted from 1")
        }
    }
}
