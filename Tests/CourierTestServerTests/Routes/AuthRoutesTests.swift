import Foundation
import Testing

@testable import CourierTestServer

@Suite struct AuthRoutesTests {
    private func basic(_ user: String, _ password: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    @Test func basicAuthAcceptsTheRightCredentials() async throws {
        try await TestServer.withRunningServer { server in
            let answer = try await expectSameAsHttpbin(
                server,
                "/basic-auth/alice/s3cr:et",
                headers: [basic("alice", "s3cr:et")]
            )
            #expect(answer.status == 200)
            #expect(answer.json == .object(["authenticated": .bool(true), "user": .string("alice")]))
        }
    }

    @Test func basicAuthChallengesOtherwise() async throws {
        try await TestServer.withRunningServer { server in
            let wrong = try await expectSameAsHttpbin(
                server,
                "/basic-auth/alice/secret",
                headers: [basic("alice", "nope")],
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(wrong.status == 401)
            #expect(wrong.headers["WWW-Authenticate"] == ["Basic realm=\"Fake Realm\""])
            let missing = try await expectSameAsHttpbin(
                server,
                "/basic-auth/alice/secret",
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(missing.status == 401)
        }
    }

    @Test func hiddenBasicAuthAnswers404() async throws {
        try await TestServer.withRunningServer { server in
            let hidden = try await expectSameAsHttpbin(
                server,
                "/hidden-basic-auth/bob/pw",
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(hidden.status == 404)
            #expect(hidden.headers["WWW-Authenticate"].isEmpty)
            let shown = try await expectSameAsHttpbin(
                server,
                "/hidden-basic-auth/bob/pw",
                headers: [basic("bob", "pw")]
            )
            #expect(shown.json?["authenticated"] == .bool(true))
        }
    }

    @Test func bearerNeedsABearerToken() async throws {
        try await TestServer.withRunningServer { server in
            let missing = try await expectSameAsHttpbin(
                server,
                "/bearer",
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(missing.status == 401 && missing.headers["WWW-Authenticate"] == ["Bearer"])
            let basic = try await expectSameAsHttpbin(
                server,
                "/bearer",
                headers: [basic("a", "b")],
                comparingHeaders: ["WWW-Authenticate"],
                comparingBody: .none
            )
            #expect(basic.status == 401)
            let good = try await expectSameAsHttpbin(server, "/bearer", headers: [("Authorization", "Bearer t0k.en")])
            #expect(good.json == .object(["authenticated": .bool(true), "token": .string("t0k.en")]))
        }
    }
}
