import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier answers `401` challenges itself, the same way on both transports: with a request's own
/// credential, or one stored for the protection space.
@Suite struct CredentialTests {
    private struct Answer: Decodable, Sendable {
        let authenticated: Bool
        let user: String
    }

    /// The protection space `/basic-auth` challenges for on `server`.
    private static func basicSpace(_ server: TestServer) -> URLProtectionSpace {
        URLProtectionSpace(
            host: "127.0.0.1",
            port: server.port,
            protocol: "http",
            realm: "Fake Realm",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
    }

    @Test(arguments: TransportKind.allCases)
    func aRequestsOwnCredentialAnswersABasicChallenge(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.credentialStorage = nil }
            let request = session.request(server.url("/basic-auth/ada/lovelace"))
                .authenticate(username: "ada", password: "lovelace", persistence: .none)
            let answer = try await request.validate().serializingDecodable(Answer.self).value
            #expect(answer.authenticated && answer.user == "ada")
            #expect(request.redirects.isEmpty, "a challenge answered is not a redirect")
            // Sent without a challenge first: the server saw two requests.
            #expect(request.response?.statusCode == 200)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRefusedCredentialFailsNamingTheScheme(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.credentialStorage = nil }
            let error = await failure(
                of: session.request(server.url("/basic-auth/ada/lovelace"))
                    .authenticate(username: "ada", password: "wrong-secret", persistence: .none)
            )
            #expect(error?.kind == .authenticationFailed)
            #expect(error?.refusedAuthenticationScheme == "Basic")
            #expect(error.map { "\($0)".contains("wrong-secret") } == false, "the password never appears")
            await session.invalidate()
        }
    }

    /// A Basic user name with a `:` would reach the server as another user name and password
    /// (here `a` with `b:c`, which the route accepts): the request fails instead, whether the
    /// credential answers the challenge or comes from the URL's user info.
    @Test(arguments: TransportKind.allCases)
    func aBasicUserNameWithAColonFailsInsteadOfSendingAnotherCredential(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.credentialStorage = nil }
            let answering = await failure(
                of: session.request(server.url("/basic-auth/a/b:c"))
                    .authenticate(username: "a:b", password: "c", persistence: .none)
            )
            #expect(answering?.kind == .credentialEncodingFailed)
            #expect(answering?.credentialEncodingFailureReason == .colonInBasicUserName)
            let port = try #require(server.url("/").port)
            let inURL = try #require(URL(string: "http://a%3Ab:c@127.0.0.1:\(port)/basic-auth/a/b:c"))
            let fromUserInfo = await failure(of: session.request(inURL))
            #expect(fromUserInfo?.kind == .credentialEncodingFailed)
            #expect(fromUserInfo?.credentialEncodingFailureReason == .colonInBasicUserName)
            // The same pair split where Basic splits is the server's user, and is accepted.
            let answer = try await session.request(server.url("/basic-auth/a/b:c"))
                .authenticate(username: "a", password: "b:c", persistence: .none)
                .validate().serializingDecodable(Answer.self).value
            #expect(answer.user == "a")
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStoredCredentialAnswersAndAnAcceptedOneIsKept(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let storage = URLCredentialStorage.shared
            let space = Self.basicSpace(server)
            let session = transport.makeSession { $0.credentialStorage = storage }
            // Nothing stored for this server's port yet: the 401 is the response.
            let refused = await session.request(server.url("/basic-auth/ada/lovelace")).serializingData().response
            #expect(refused.head?.statusCode == 401)
            // One stored by hand, for a protection space made anew (FoundationNetworking compares
            // spaces by identity: URLSession on Linux never found it).
            storage.set(URLCredential(user: "ada", password: "lovelace", persistence: .forSession), for: space)
            let byHand = await session.request(server.url("/basic-auth/ada/lovelace"))
                .serializingDecodable(Answer.self).response
            #expect(byHand.value?.user == "ada")
            for (kept, credentials) in storage.allCredentials where kept.port == space.port {
                for credential in credentials.values { storage.remove(credential, for: kept) }
            }
            // Accepted with persistence .forSession: kept for the protection space...
            let first = await session.request(server.url("/basic-auth/ada/lovelace"))
                .authenticate(username: "ada", password: "lovelace")
                .serializingDecodable(Answer.self).response
            #expect(first.value?.user == "ada")
            let stored = storage.allCredentials.first { $0.key.port == space.port && $0.key.realm == space.realm }
            #expect(stored?.value["ada"] != nil)
            // ...and a request without a credential of its own answers with it.
            let second = await session.request(server.url("/basic-auth/ada/lovelace"))
                .serializingDecodable(Answer.self).response
            #expect(second.value?.user == "ada")
            if let (kept, credentials) = stored {
                for credential in credentials.values { storage.remove(credential, for: kept) }
            }
            await session.invalidate()
        }
    }

    /// Stored the way Foundation spells it: `NSURLProtectionSpaceHTTP` (on Linux not the string
    /// `http`) and `NSURLAuthenticationMethodDefault` (Basic, for HTTP).
    @Test(arguments: TransportKind.allCases)
    func aCredentialStoredWithFoundationsConstantsAnswers(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let storage = URLCredentialStorage.shared
            let space = URLProtectionSpace(
                host: "127.0.0.1",
                port: server.port,
                protocol: NSURLProtectionSpaceHTTP,
                realm: "Fake Realm",
                authenticationMethod: NSURLAuthenticationMethodDefault
            )
            storage.set(URLCredential(user: "ada", password: "lovelace", persistence: .forSession), for: space)
            defer {
                for (kept, credentials) in storage.allCredentials where kept.port == space.port {
                    for credential in credentials.values { storage.remove(credential, for: kept) }
                }
            }
            let session = transport.makeSession { $0.credentialStorage = storage }
            let response = await session.request(server.url("/basic-auth/ada/lovelace"))
                .serializingDecodable(Answer.self).response
            #expect(response.value?.user == "ada", "\(String(describing: response.error))")
            await session.invalidate()
        }
    }

    /// An adapter (the caller's own code) that moves the request to another server takes the
    /// request's credential with it: the credential is for where the request is sent.
    @Test(arguments: TransportKind.allCases)
    func aRequestsOwnCredentialAnswersWhereAnAdapterSentIt(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { written in
            try await TestServer.withRunningServer { actual in
                let port = actual.port
                let session = transport.makeSession(
                    { $0.credentialStorage = nil },
                    interceptor: Adapter { request, _ in
                        var request = request
                        guard let url = request.url,
                            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
                        else { return request }
                        components.port = port
                        request.url = components.url
                        return request
                    }
                )
                let request = session.request(written.url("/basic-auth/ada/lovelace"))
                    .authenticate(username: "ada", password: "lovelace", persistence: .none)
                let answer = try await request.validate().serializingDecodable(Answer.self).value
                #expect(answer.authenticated && answer.user == "ada")
                #expect(request.response?.url?.port == port)
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCredentialNeverFollowsARedirectToAnotherOrigin(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { origin in
            try await TestServer.withRunningServer { other in
                let session = transport.makeSession { $0.credentialStorage = nil }
                let elsewhere = other.url("/basic-auth/ada/lovelace").absoluteString
                let response = await session.request(origin.url("/redirect-to"), parameters: ["url": elsewhere])
                    .authenticate(username: "ada", password: "lovelace", persistence: .none)
                    .serializingData().response
                #expect(response.head?.statusCode == 401, "the other origin's challenge is not answered")
                await session.invalidate()
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aChallengeWithoutASupportedSchemeIsTheResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.credentialStorage = nil }
            let response = await session.request(server.url("/bearer"))
                .authenticate(username: "ada", password: "lovelace", persistence: .none)
                .serializingData(emptyResponseCodes: [401]).response
            #expect(response.head?.statusCode == 401)
            #expect(response.error == nil)
            await session.invalidate()
        }
    }
}

/// Digest answered by Courier on both transports, against the test server's httpbin route.
@Suite struct DigestCredentialTests {
    private struct Answer: Decodable, Sendable {
        let authenticated: Bool
        let user: String
    }

    /// A server that hands one nonce to every challenge sees its count rise across the
    /// session's requests (RFC 7616 §3.4), not `00000001` again, which it may take for a replay.
    @Test(arguments: TransportKind.allCases)
    func aNonceAnsweredAgainCountsOnAcrossRequests(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.credentialStorage = nil }
            var counts: [String?] = []
            for _ in 0..<3 {
                let response = await session.request(server.url("/digest-auth/auth/ada/lovelace/SHA-256?nonce=fixed42"))
                    .authenticate(username: "ada", password: "lovelace", persistence: .none)
                    .validate()
                    .serializingDecodable(Answer.self).response
                #expect(response.value?.authenticated == true, "\(String(describing: response.error))")
                counts.append(response.head?.value(forHTTPHeaderField: "Courier-Digest-Nonce-Count"))
            }
            #expect(counts == ["00000001", "00000002", "00000003"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases, ["MD5", "SHA-256", "SHA-512"])
    func aDigestChallengeIsAnsweredWithTheStrongestAlgorithm(transport: TransportKind, algorithm: String) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.credentialStorage = nil }
            for qop in ["auth", "auth-int"] {
                let request = session.request(server.url("/digest-auth/\(qop)/ada/lovelace/\(algorithm)"))
                    .authenticate(username: "ada", password: "lovelace", persistence: .none)
                let answer = try await request.validate().serializingDecodable(Answer.self).value
                #expect(answer.authenticated && answer.user == "ada", "\(qop) \(algorithm)")
                #expect(request.lastRequest?.value(forHTTPHeaderField: "Authorization") == nil, "answered per exchange")
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRefusedDigestCredentialFailsNamingTheScheme(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.credentialStorage = nil }
            let error = await failure(
                of: session.request(server.url("/digest-auth/auth/ada/lovelace/SHA-256"))
                    .authenticate(username: "ada", password: "not-it", persistence: .none)
            )
            #expect(error?.kind == .authenticationFailed)
            #expect(error?.refusedAuthenticationScheme == "Digest")
            await session.invalidate()
        }
    }
}

/// Cookies kept by the session on both transports, redirects included.
@Suite struct SessionCookieTests {
    @Test(arguments: TransportKind.allCases)
    func cookiesSetOnARedirectAreSentOnItsNextRequestAndAfter(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // /cookies/set answers 302 to /cookies with the Set-Cookie: the next hop carries it.
            let first = try await session.request(server.url("/cookies/set?flavour=oat"))
                .serializingDecodable([String: [String: String]].self).value
            #expect(first["cookies"]?["flavour"] == "oat")
            let later = try await session.request(server.url("/cookies"))
                .serializingDecodable([String: [String: String]].self).value
            #expect(later["cookies"]?["flavour"] == "oat")
            // The caller's own Cookie wins.
            let own = try await session.request(server.url("/cookies"), headers: ["Cookie": "mine=1"])
                .serializingDecodable([String: [String: String]].self).value
            #expect(own["cookies"] == ["mine": "1"])
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func withoutCookieStorageNoCookieIsKept(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession { $0.cookieStorage = nil }
            let echo = try await session.request(server.url("/cookies/set?flavour=oat"))
                .serializingDecodable([String: [String: String]].self).value
            #expect(echo["cookies"]?.isEmpty == true)
            await session.invalidate()
        }
    }
}
