import Courier
import CourierTestServer
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Header validation wherever headers enter a request: its parameters, a URLRequest handed in,
/// the request modifier, an adapter. (The rules themselves are in `HTTPHeadersTests`.)
@Suite struct HTTPHeaderTests {
    private static let secret = "s3cr3t-t0ken"

    /// The request's error, after checking that it names the header and hides the secret.
    private func rejection(
        of request: DataRequest,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async
        -> CourierError?
    {
        guard case .failure(let error) = await request.serializingData().result else {
            Issue.record("the request was sent", sourceLocation: sourceLocation)
            return nil
        }
        #expect(error.kind == .invalidHeader, "\(error)", sourceLocation: sourceLocation)
        #expect(!error.description.contains(Self.secret), sourceLocation: sourceLocation)
        #expect(!String(reflecting: error).contains(Self.secret), sourceLocation: sourceLocation)
        return error
    }

    /// Nothing reached the server.
    private func expectNothingSent(to server: TestServer) async {
        await #expect(throws: TestServerError.timedOut) {
            try await server.waitForRequests(1, timeout: .milliseconds(100))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func controlCharactersInParametersAreRejected(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            for value in ["Bearer \(Self.secret)\u{7F}", "Bearer \(Self.secret)\u{1}", "\u{0}\(Self.secret)"] {
                let error = await rejection(of: session.request(server.url("/get"), headers: ["Authorization": value]))
                #expect(error?.errorDescription?.contains("\"Authorization\"") == true)
            }
            await expectNothingSent(to: server)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aURLRequestHandedInIsChecked(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var request = URLRequest(url: server.url("/get"))
            request.setValue("Bearer \(Self.secret)\u{7F}", forHTTPHeaderField: "Authorization")
            _ = await rejection(of: session.request(request))
            // `allHTTPHeaderFields` keeps a line break that `setValue` would silently drop.
            var withLineBreak = URLRequest(url: server.url("/get"))
            withLineBreak.allHTTPHeaderFields = ["Authorization": "Bearer \(Self.secret)\r\nX-Injected: 1"]
            _ = await rejection(of: session.request(withLineBreak))
            await expectNothingSent(to: server)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func theRequestModifierIsChecked(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let request = session.request(
                server.url("/get"),
                requestModifier: {
                    $0.setValue("Bearer \(Self.secret)\u{7F}", forHTTPHeaderField: "Authorization")
                }
            )
            _ = await rejection(of: request)
            await expectNothingSent(to: server)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func anAdaptedRequestIsChecked(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let adapter = Adapter { request, _ in
                var adapted = request
                adapted.setValue("Bearer \(Self.secret)\u{1F}", forHTTPHeaderField: "Authorization")
                return adapted
            }
            let session = transport.makeSession(interceptor: adapter)
            _ = await rejection(of: session.request(server.url("/get")))
            await expectNothingSent(to: server)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func validValuesGoOutWhole(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let result = await session.request(
                server.url("/headers"),
                headers: ["X-Tabbed": "a\tb c", "X-Symbols": "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"]
            ).serializingDecodable([String: [String: String]].self).result
            let headers = try result.get()["headers"]
            #expect(headers?["X-Tabbed"] == "a\tb c")
            #expect(headers?["X-Symbols"] == "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
            await session.invalidate()
        }
    }
}
