import AsyncHTTPClient
@_spi(CourierTransport) import Courier
import Foundation
import NIOCore
import X509

/// Asks an OCSP responder about a certificate, for swift-certificates' `OCSPVerifierPolicy`: a
/// `POST` of the DER request (RFC 6960, appendix A.1) over a client of its own, the answer read up
/// to ``maximumResponseSize``.
///
/// The responder's address comes from a certificate a CA signed; it is still checked as any URL
/// Courier sends to is (SwiftNIO traps on a port above 65535). A failure is "terminal" for a policy
/// that requires answers (it refuses the certificate) and "non-terminal" otherwise (the policy goes
/// on to the next certificate).
struct OCSPQuery: OCSPRequester {
    /// The largest answer read (real ones are a few KiB).
    static let maximumResponseSize = 64 * 1024
    /// The longest one query may take, answer included. Shorter than the policy's bound for a
    /// whole chain (10 s), so that a responder that does not answer (a tarpit named by the
    /// server's certificate, say) leaves time to ask about the next certificate.
    static let timeout = TimeAmount.seconds(4)

    let client: HTTPClient
    /// Whether a responder that cannot be asked refuses the certificate.
    let requiresAnswer: Bool

    func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        do {
            return .response(try await answer(to: request, from: uri))
        } catch {
            return requiresAnswer ? .terminalError(error) : .nonTerminalError(error)
        }
    }

    private func answer(to request: [UInt8], from uri: String) async throws -> [UInt8] {
        guard let url = URL(string: uri), ["http", "https"].contains(url.scheme?.lowercased()) else {
            throw QueryError("the OCSP responder's address is not an http URL")
        }
        if let problem = URLValidation.problem(with: url) { throw problem }
        var query = HTTPClientRequest(url: uri)
        query.method = .POST
        query.headers.add(name: "Content-Type", value: "application/ocsp-request")
        query.headers.add(name: "Accept", value: "application/ocsp-response")
        query.body = .bytes(ByteBuffer(bytes: request))
        let response = try await client.execute(query, timeout: Self.timeout)
        guard response.status == .ok else {
            throw QueryError("the OCSP responder answered \(response.status.code)")
        }
        let body = try await response.body.collect(upTo: Self.maximumResponseSize)
        return Array(body.readableBytesView)
    }

    /// Why a query got no answer.
    struct QueryError: Error, CustomStringConvertible {
        let description: String

        init(_ description: String) {
            self.description = description
        }
    }
}
