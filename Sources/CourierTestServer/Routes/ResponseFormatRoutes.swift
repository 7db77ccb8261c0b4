import Foundation
import NIOHTTP1

/// httpbin's response-format routes: fixed JSON, XML, HTML and UTF-8 documents, compressed bodies,
/// `/response-headers`, and `/base64/:value` (any body the test names).
enum ResponseFormatRoutes {
    static var routes: [Route] {
        [
            Route("/json") { _, _ in .respond(.json(slideshow)) },
            Route("/xml") { _, _ in .respond(.text(sampleXML, contentType: "application/xml")) },
            Route("/html") { _, _ in .respond(.text(sampleHTML)) },
            Route("/encoding/utf8") { _, _ in .respond(.text(sampleUTF8)) },
            Route("/gzip") { request, _ in compressed(request, format: .gzip, flag: "gzipped", encoding: "gzip") },
            Route("/deflate") { request, _ in
                compressed(request, format: .zlib, flag: "deflated", encoding: "deflate")
            },
            Route("/response-headers", methods: [.GET, .POST]) { request, _ in
                .respond(responseHeaders(request.query))
            },
            Route("/base64/:value") { request, _ in .respond(decodedBase64(request.parameters["value"] ?? "")) },
        ]
    }

    /// The URL-safe base64 `value` decoded, as httpbin's `/base64/:value` sends it (as HTML); its
    /// hint, as httpbin's, when `value` is not base64.
    static func decodedBase64(_ value: String) -> ServerResponse {
        var standard = value.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let bytes = Data(base64Encoded: standard) else {
            return .text("Incorrect Base64 data try: SFRUUEJJTiBpcyBhd2Vzb21l")
        }
        return ServerResponse(
            status: .ok,
            headers: [("Content-Type", "text/html; charset=utf-8")],
            body: .bytes(Array(bytes))
        )
    }

    private static func compressed(
        _ request: ServerRequest,
        format: Compression.Format,
        flag: String,
        encoding: String
    ) -> RouteOutcome {
        let document = RequestEcho.describe(
            request,
            [.origin, .headers],
            extras: ["method": .string(request.method.rawValue), flag: .bool(true)]
        )
        guard let body = Compression.compress(Array(document.prettyPrinted().utf8), format: format) else {
            return .respond(Router.errorPage(.internalServerError, "Compression failed."))
        }
        return .respond(
            ServerResponse(
                status: .ok,
                headers: [("Content-Type", "application/json"), ("Content-Encoding", encoding)],
                body: .bytes(body)
            )
        )
    }

    /// Sets the query's name-value pairs as response headers and echoes all response headers as
    /// JSON, `Content-Length` included: the body is rebuilt until its length stops changing.
    static func responseHeaders(_ query: [(String, String)]) -> ServerResponse {
        var echoed: [String: [String]] = ["Content-Type": ["application/json"]]
        for (name, value) in query {
            // A repeated Content-Type joins the one the server sets, as werkzeug's headers do.
            let key = name.equalsIgnoringCase("Content-Type") ? "Content-Type" : name
            echoed[key, default: []].append(value)
        }
        var length = 0
        var body: [UInt8] = []
        repeat {
            var object = echoed.mapValues {
                $0.count == 1 ? JSONValue.string($0[0]) : .array($0.map(JSONValue.string))
            }
            object["Content-Length"] = .string(String(length))
            body = Array(JSONValue.object(object).prettyPrinted().utf8)
            if body.count == length { break }
            length = body.count
        } while true
        var response = ServerResponse(
            status: .ok,
            headers: [("Content-Type", "application/json")] + query,
            body: .bytes(body)
        )
        // Framing headers chosen by the client would desynchronise a kept-alive connection.
        let framing = ["content-length", "transfer-encoding", "connection"]
        if query.contains(where: { framing.contains($0.0.lowercased()) }) {
            response.closesConnection = true
        }
        return response
    }

    static let slideshow = JSONValue.object([
        "slideshow": .object([
            "author": .string("Yours Truly"),
            "date": .string("date of publication"),
            "title": .string("Sample Slide Show"),
            "slides": .array([
                .object(["title": .string("Wake up to WonderWidgets!"), "type": .string("all")]),
                .object([
                    "items": .array([
                        .string("Why <em>WonderWidgets</em> are great"),
                        .string("Who <em>buys</em> WonderWidgets"),
                    ]),
                    "title": .string("Overview"),
                    "type": .string("all"),
                ]),
            ]),
        ])
    ])

    static let sampleXML = """
        <?xml version='1.0' encoding='us-ascii'?>

        <!--  A SAMPLE set of slides  -->

        <slideshow
            title="Sample Slide Show"
            date="Date of publication"
            author="Yours Truly"
            >

            <!-- TITLE SLIDE -->
            <slide type="all">
              <title>Wake up to WonderWidgets!</title>
            </slide>

            <!-- OVERVIEW -->
            <slide type="all">
                <title>Overview</title>
                <item>Why <em>WonderWidgets</em> are great</item>
                <item/>
                <item>Who <em>buys</em> WonderWidgets</item>
            </slide>

        </slideshow>
        """

    static let sampleHTML = """
        <!DOCTYPE html>
        <html>
          <head>
          </head>
          <body>
              <h1>Courier test server</h1>
              <div>
                <p>
                  An embedded, httpbin-compatible HTTP server. This page stands where httpbin serves a
                  chapter of a novel: a plain HTML document of a few paragraphs, for clients that parse
                  or display HTML.
                </p>
                <p>
                  Every route answers as httpbin does, so a test written against this server also runs
                  against real httpbin, and the fault routes under /fault/ add what httpbin cannot do.
                </p>
              </div>
          </body>
        </html>
        """

    static let sampleUTF8 = """
        <h1>Unicode Demo</h1>

        <pre>
        UTF-8 encoded sample plain-text file
        ‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾

        Two-byte characters: ä ö ü ß é è ñ ø å æ œ Ω π λ ж щ я
        Three-byte characters: € ₹ ™ ∑ ∞ ≠ ≤ ≥ — “quotes” ‘single’ 日本語 中文 한국어
        Four-byte characters: 𝄞 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀 🚀 🧪
        Combining marks: é (e + U+0301), ñ (n + U+0303)
        Right-to-left: עברית العربية
        </pre>

        """
}
