import NIOHTTP1
import Testing

@testable import CourierTestServer

@Suite struct RouterTests {
    private let router: Router = {
        var router = Router()
        router.add([
            Route("/items/:id", methods: [.GET, .PUT]) { _, _ in .close },
            Route("/files/*path") { _, _ in .close },
        ])
        return router
    }()

    private func parameters(_ method: HTTPMethod, _ path: String) -> [String: String]? {
        guard case .route(_, let parameters) = router.resolve(method: method, path: path) else { return nil }
        return parameters
    }

    private func status(_ method: HTTPMethod, _ path: String) -> (Int, String?)? {
        guard case .response(let response) = router.resolve(method: method, path: path) else { return nil }
        return (Int(response.status.code), response.header("Allow"))
    }

    @Test func capturesAndDecodesParameters() {
        #expect(parameters(.GET, "/items/a%20b") == ["id": "a b"])
        #expect(parameters(.PUT, "/items/7") == ["id": "7"])
        #expect(parameters(.GET, "/files/a/b%2Fc") == ["path": "a/b/c"])
        #expect(parameters(.GET, "/files") == ["path": ""])
    }

    @Test func headIsAnsweredByTheGetRoute() {
        #expect(parameters(.HEAD, "/items/1") == ["id": "1"])
    }

    @Test func unknownPathsAre404() {
        #expect(status(.GET, "/nothing")?.0 == 404)
        #expect(status(.GET, "/items")?.0 == 404)
        #expect(status(.GET, "/items/1/2")?.0 == 404)
    }

    @Test func wrongMethodsAre405WithAllow() {
        let answer = status(.POST, "/items/1")
        #expect(answer?.0 == 405)
        #expect(answer?.1 == "GET, HEAD, OPTIONS, PUT")
    }

    @Test func optionsListsTheAllowedMethods() {
        let answer = status(.OPTIONS, "/items/1")
        #expect(answer?.0 == 200)
        #expect(answer?.1 == "GET, HEAD, OPTIONS, PUT")
    }
}
