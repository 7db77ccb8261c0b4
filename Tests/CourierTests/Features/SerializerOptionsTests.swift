import CourierTestServer
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's serializer surface: preprocessors, the empty-body policy and a decoder value on
/// every `response…`/`serializing…` call, download and stream serializers, and the static
/// shorthands.
@Suite struct SerializerOptionsTests {
    struct Greeting: Codable, Sendable, Equatable {
        let greetingText: String
    }

    /// The body Google's JSON APIs send: an XSSI guard line, then the JSON.
    static let guardedJSON = ")]}',\n{\"greeting_text\":\"hello\"}"

    /// `/base64/…` path answering `text` as its body.
    static func base64Path(_ text: String) -> String {
        let encoded = Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return "/base64/\(encoded)"
    }

    static var snakeCase: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    /// Throws whatever it is given: shows when a preprocessor runs.
    struct RefusingPreprocessor: DataPreprocessor {
        struct Refused: Error {}
        func preprocess(_ data: Data) throws -> Data { throw Refused() }
    }

    /// Reads only the downloaded file's size: a serializer that never loads the file.
    struct FileSizeSerializer: DownloadResponseSerializerProtocol {
        func serializeDownload(
            request: URLRequest?,
            response: HTTPURLResponse?,
            fileURL: URL?,
            error: CourierError?
        ) throws -> Int {
            if let error { throw error }
            let fileURL = try #require(fileURL)
            return try #require(try FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? Int)
        }
    }

    // MARK: - Without a server

    @Test func theXSSIPreprocessorRemovesOnlyAWholeGuardLine() throws {
        let preprocessor = GoogleXSSIPreprocessor()
        #expect(try preprocessor.preprocess(Data(Self.guardedJSON.utf8)) == Data("{\"greeting_text\":\"hello\"}".utf8))
        #expect(try preprocessor.preprocess(Data(")]}',".utf8)) == Data(")]}',".utf8), "no line break: not the guard")
        #expect(try preprocessor.preprocess(Data("{}".utf8)) == Data("{}".utf8))
        #expect(try preprocessor.preprocess(Data()) == Data())
        // A slice of larger data, whose indices do not start at zero.
        let slice = Data(("xx" + Self.guardedJSON).utf8).dropFirst(2)
        #expect(try preprocessor.preprocess(slice) == Data("{\"greeting_text\":\"hello\"}".utf8))
        #expect(try PassthroughPreprocessor().preprocess(Data("a".utf8)) == Data("a".utf8))
    }

    @Test func aPreprocessorRunsOnlyOnABody() throws {
        let refusing = DataResponseSerializer(dataPreprocessor: RefusingPreprocessor())
        let noContent = HTTPURLResponse(
            url: URL(fileURLWithPath: "/"),
            statusCode: 204,
            httpVersion: nil,
            headerFields: nil
        )
        #expect(try refusing.serialize(request: nil, response: noContent, data: nil, error: nil) == Data())
        #expect(throws: RefusingPreprocessor.Refused.self) {
            try refusing.serialize(request: nil, response: noContent, data: Data("x".utf8), error: nil)
        }
    }

    @Test func anAllowedEmptyBodyFailsATypeWithoutAnEmptyValueSayingSo() throws {
        let noContent = HTTPURLResponse(
            url: URL(fileURLWithPath: "/"),
            statusCode: 204,
            httpVersion: nil,
            headerFields: nil
        )
        let error = try #require(throws: CourierError.self) {
            try DecodableResponseSerializer<Greeting>().serialize(
                request: nil,
                response: noContent,
                data: nil,
                error: nil
            )
        }
        guard case .invalidEmptyResponse(let type)? = error.serializationFailureReason else {
            Issue.record("expected invalidEmptyResponse, got \(error)")
            return
        }
        #expect(type == "Greeting")
        #expect(error.errorDescription?.contains("Greeting") == true)
    }

    @Test func streamSerializersMakeAValueOfEachPiece() throws {
        let decodable = DecodableStreamSerializer<Greeting>(decoder: Self.snakeCase, dataPreprocessor: .googleXSSI)
        #expect(try decodable.serialize(Data(Self.guardedJSON.utf8)) == Greeting(greetingText: "hello"))
        let error = try #require(throws: CourierError.self) { try decodable.serialize(Data("{".utf8)) }
        #expect(error.kind == .responseSerializationFailed)
        #expect(try StringStreamSerializer().serialize(Data("héllo".utf8)) == "héllo")
        #expect(try PassthroughStreamSerializer().serialize(Data([1, 2])) == Data([1, 2]))
    }

    @Test func aDownloadSerializerWithoutAFileSaysSo() throws {
        let error = try #require(throws: CourierError.self) {
            try URLResponseSerializer().serializeDownload(request: nil, response: nil, fileURL: nil, error: nil)
        }
        guard case .inputFileNil? = error.serializationFailureReason else {
            Issue.record("expected inputFileNil, got \(error)")
            return
        }
        let fromData = try #require(throws: CourierError.self) {
            try DataResponseSerializer().serializeDownload(request: nil, response: nil, fileURL: nil, error: nil)
        }
        guard case .inputFileNil? = fromData.serializationFailureReason else {
            Issue.record("expected inputFileNil, got \(fromData)")
            return
        }
    }

    // MARK: - Against the embedded server

    @Test(arguments: TransportKind.allCases)
    func requestsTakeAPreprocessorAndADecoderValue(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let url = server.url(Self.base64Path(Self.guardedJSON))
            let awaited = try await session.request(url)
                .serializingDecodable(Greeting.self, dataPreprocessor: .googleXSSI, decoder: Self.snakeCase).value
            #expect(awaited == Greeting(greetingText: "hello"))

            let handled = await withCheckedContinuation { continuation in
                session.request(url).responseDecodable(
                    of: Greeting.self,
                    dataPreprocessor: GoogleXSSIPreprocessor(),
                    decoder: Self.snakeCase
                ) { continuation.resume(returning: $0) }
            }
            #expect(handled.value == Greeting(greetingText: "hello"))

            let text = try await session.request(url).serializingString(dataPreprocessor: .googleXSSI).value
            #expect(text == "{\"greeting_text\":\"hello\"}")
            let data = try await session.request(url).serializingData(dataPreprocessor: .googleXSSI).value
            #expect(data == Data("{\"greeting_text\":\"hello\"}".utf8))

            // Without the preprocessor the guard line is still there, so decoding fails.
            let unguarded = await session.request(url).serializingDecodable(Greeting.self, decoder: Self.snakeCase)
                .result
            #expect(unguarded.failure?.kind == .responseSerializationFailed)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aPreprocessorErrorFailsTheResponse(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let result = await session.request(server.url("/json"))
                .serializingData(dataPreprocessor: RefusingPreprocessor()).result
            guard case .customSerializationFailed(let error)? = result.failure?.serializationFailureReason else {
                Issue.record("expected customSerializationFailed, got \(result)")
                await session.invalidate()
                return
            }
            #expect(error is RefusingPreprocessor.Refused)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func staticSerializersStandForTheirTypes(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let url = server.url(Self.base64Path("{\"greeting_text\":\"hi\"}"))
            let decoded = try await session.request(url)
                .serializingResponse(using: .decodable(of: Greeting.self, decoder: Self.snakeCase)).value
            #expect(decoded == Greeting(greetingText: "hi"))
            let text = try await session.request(url).serializingResponse(using: .string).value
            #expect(text == "{\"greeting_text\":\"hi\"}")
            let data = await withCheckedContinuation { continuation in
                session.request(url).response(responseSerializer: .data(emptyResponseCodes: [])) {
                    continuation.resume(returning: $0)
                }
            }
            #expect(data.value == Data("{\"greeting_text\":\"hi\"}".utf8))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func noContentForATypeWithoutAnEmptyValueSaysSo(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let result = await session.request(server.url("/status/204")).serializingDecodable(Greeting.self).result
            guard case .invalidEmptyResponse(let type)? = result.failure?.serializationFailureReason else {
                Issue.record("expected invalidEmptyResponse, got \(result)")
                await session.invalidate()
                return
            }
            #expect(type == "Greeting")
            let empty = try await session.request(server.url("/status/204")).serializingDecodable(Empty.self).value
            #expect(empty == Empty.value)
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func downloadsTakeTheSameOptionsAndDownloadSerializers(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            let url = server.url(Self.base64Path(Self.guardedJSON))
            let decoded = try await session.download(url)
                .serializingDecodable(Greeting.self, dataPreprocessor: .googleXSSI, decoder: Self.snakeCase).value
            #expect(decoded == Greeting(greetingText: "hello"))

            let size = try await session.download(url).serializingDownload(using: FileSizeSerializer()).value
            #expect(size == Self.guardedJSON.utf8.count)

            let located = await withCheckedContinuation { continuation in
                session.download(url).response(responseSerializer: .url) { continuation.resume(returning: $0) }
            }
            let fileURL = try #require(located.value)
            #expect(try Data(contentsOf: fileURL) == Data(Self.guardedJSON.utf8))
            try? FileManager.default.removeItem(at: fileURL)

            let text = await withCheckedContinuation { continuation in
                session.download(url).responseString(dataPreprocessor: .googleXSSI) {
                    continuation.resume(returning: $0)
                }
            }
            #expect(text.value == "{\"greeting_text\":\"hello\"}")

            let bytes = try await session.download(url).serializingDownload(using: .data).value
            #expect(bytes == Data(Self.guardedJSON.utf8))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamsTakeASerializer(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // A body this small arrives in one piece on loopback.
            let url = server.url(Self.base64Path("{\"greeting_text\":\"hey\"}"))
            let values = await withCheckedContinuation { continuation in
                let collected = Protected<[Result<Greeting, CourierError>]>([])
                session.streamRequest(url).responseStream(using: .decodable(of: Greeting.self, decoder: Self.snakeCase))
                {
                    stream in
                    switch stream.event {
                    case .stream(let result): collected.withLock { $0.append(result) }
                    case .complete: continuation.resume(returning: collected.withLock { $0 })
                    }
                }
            }
            #expect(values.count == 1)
            #expect(values.first.flatMap { try? $0.get() } == Greeting(greetingText: "hey"))
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamingResponsesSerializeEachPieceAndGoOnAfterAFailure(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            // A serializer that fails on every piece: each failure is an element, not the end.
            struct Counting: DataStreamSerializer {
                let failsOver: Int
                func serialize(_ data: Data) throws -> Int {
                    guard data.count <= failsOver else { throw CocoaError(.coderValueNotFound) }
                    return data.count
                }
            }
            let url = server.url("/stream-bytes/3000?chunk_size=1000")
            var succeeded = 0
            for try await result in session.streamRequest(url).streamingResponses(
                serializedUsing: Counting(failsOver: .max)
            ) {
                succeeded += try result.get()
            }
            #expect(succeeded == 3000)
            var failures: [CourierError] = []
            for try await result in session.streamRequest(url).streamingResponses(
                serializedUsing: Counting(failsOver: -1)
            ) {
                if case .failure(let error) = result { failures.append(error) }
            }
            #expect(!failures.isEmpty, "every piece failed, and the loop went on to the end")
            #expect(failures.allSatisfy { $0.kind == .responseSerializationFailed })
            #expect(failures.first?.underlyingError as? CocoaError == CocoaError(.coderValueNotFound))
            // The request's own failure ends the loop by throwing.
            await #expect(throws: CourierError.self) {
                for try await _ in session.streamRequest(server.url("/status/500")).validate()
                    .streamingResponses(serializedUsing: Counting(failsOver: .max))
                {}
            }
            await session.invalidate()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamingDataEndsWithoutAnEmptyPiece(transport: TransportKind) async throws {
        try await TestServer.withRunningServer { server in
            let session = transport.makeSession()
            var pieces: [Data] = []
            for try await piece in session.streamRequest(server.url("/stream-bytes/3000?chunk_size=1000"))
                .streamingData()
            {
                pieces.append(piece)
            }
            #expect(pieces.reduce(0) { $0 + $1.count } == 3000)
            #expect(!pieces.isEmpty)
            #expect(pieces.allSatisfy { !$0.isEmpty }, "pieces: \(pieces.map(\.count))")
            await session.invalidate()
        }
    }
}
