import NIOHTTP1

/// `POST /ocsp[?delay=S]`: the configuration's ``TestCertificateAuthority/OCSPResponder`` answers
/// an OCSP request (RFC 6960, `application/ocsp-request`) with a signed `application/ocsp-response`,
/// after `S` seconds if asked (at most 10); `400` for a body that is not one, `404` when the server
/// has no responder. Each answer counts under the key `ocsp`.
enum OCSPRoute {
    static var routes: [Route] {
        [
            Route("/ocsp", methods: [.POST]) { request, state in
                guard let responder = state.configuration.ocspResponder else { return RedirectRoutes.notFound }
                guard let answer = responder.response(to: request.body) else {
                    return .respond(ServerResponse(status: .badRequest, headers: [("Content-Type", "text/plain")]))
                }
                _ = state.recordAttempt(forKey: "ocsp")
                var response = ServerResponse(
                    status: .ok,
                    headers: [("Content-Type", "application/ocsp-response")],
                    body: .bytes(answer)
                )
                if let seconds = request.queryValue("delay").flatMap({ Double($0) }), seconds > 0 {
                    response.delay = min(.fromSeconds(seconds, cappedAt: 10), state.configuration.maximumWait)
                }
                return .respond(response)
            }
        ]
    }
}
