import Foundation
import Testing

@testable import Courier

@Suite struct CourierErrorTests {
    private struct Boom: Error, LocalizedError {
        var errorDescription: String? { "boom" }
    }

    @Test func kindsHaveStableShortNames() {
        #expect(CourierError.explicitlyCancelled.kind.description == "explicitlyCancelled")
        #expect(CourierError.invalidURL("x").kind == .invalidURL)
        #expect(CourierError.Kind.responseValidationFailed != .responseSerializationFailed)
    }

    @Test func cancellationIsRecognised() {
        #expect(CourierError.explicitlyCancelled.isExplicitlyCancelledError)
        #expect(!CourierError.invalidURL("x").isExplicitlyCancelledError)
        #expect(CourierError.explicitlyCancelled.errorDescription == "The request was cancelled.")
    }

    @Test func validationFailuresCarryTheirReason() {
        let status = CourierError.responseValidationFailed(.unacceptableStatusCode(code: 503))
        #expect(status.responseCode == 503)
        #expect(status.errorDescription?.contains("503") == true)
        let type = CourierError.responseValidationFailed(
            .unacceptableContentType(acceptableContentTypes: ["application/json"], responseContentType: "text/html")
        )
        #expect(type.responseCode == nil)
        #expect(type.errorDescription?.contains("text/html") == true)
        #expect(type.errorDescription?.contains("application/json") == true)
    }

    @Test func underlyingErrorsAreKept() {
        let transport = CourierError.transportFailed(URLError(.timedOut))
        #expect(transport.urlError?.code == .timedOut)
        #expect(transport.kind == .transportFailed)
        #expect(CourierError.parameterEncodingFailed(Boom()).underlyingError is Boom)
        #expect(CourierError.responseSerializationFailed(.decodingFailed(error: Boom())).underlyingError is Boom)
        let retry = CourierError.requestRetryFailed(retryError: Boom(), originalError: URLError(.badServerResponse))
        #expect(retry.underlyingError is Boom)
        #expect(CourierError.explicitlyCancelled.underlyingError == nil)
    }

    @Test func descriptionsNameTheProblem() {
        #expect(CourierError.invalidURL("ht tp://x").errorDescription?.contains("ht tp://x") == true)
        let withPassword = CourierError.invalidURL("http://ada:s3cret@host:99999/a@b").errorDescription ?? ""
        #expect(!withPassword.contains("s3cret"))
        #expect(withPassword.contains("http://host:99999/a@b"))
        #expect(CourierError.invalidURL("x").invalidURLString == "x")
        #expect(
            CourierError.invalidHeader(name: "X", reason: "bad").errorDescription == "A header cannot be sent: bad."
        )
        #expect(CourierError.bodyTooLarge(limit: 10).errorDescription?.contains("10 bytes") == true)
        #expect(CourierError.requestAdaptationFailed(Boom()).errorDescription == "Adapting the request failed: boom")
        #expect(
            CourierError.sessionInvalidated(nil).description
                == "CourierError.sessionInvalidated: The session was invalidated."
        )
    }
}
