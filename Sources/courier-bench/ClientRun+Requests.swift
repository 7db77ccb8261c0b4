import AsyncHTTPClient
import Courier
import Foundation
import NIOCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ClientRun {
    /// Sends ``requests`` GETs to `url`, ``concurrency`` at a time, each checked for `200` (and
    /// decoded into records when `decoding`); returns the body bytes received.
    func sendRequests(to url: URL, decoding: Bool, _ connections: Connections) async throws -> Int64 {
        let workers = max(1, min(concurrency, requests))
        return try await withThrowingTaskGroup(of: Int64.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var bytes: Int64 = 0
                    for _ in stride(from: worker, to: requests, by: workers) {
                        bytes += try await send(to: url, decoding: decoding, connections)
                    }
                    return bytes
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// One request as each client's users write it.
    private func send(to url: URL, decoding: Bool, _ connections: Connections) async throws -> Int64 {
        switch client {
        case .rawAsyncHTTPClient:
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: url.absoluteString),
                timeout: .seconds(30)
            )
            guard response.status == .ok else { throw BenchError("\(url.path) answered \(response.status.code)") }
            let body = try await response.body.collect(upTo: 16 << 20)
            if decoding { try Self.check(try JSONDecoder().decode([Record].self, from: Data(body.readableBytesView))) }
            return Int64(body.readableBytes)
        case .rawURLSession:
            guard let urlSession = connections.urlSession else { throw BenchError("no URLSession") }
            let (data, response) = try await urlSession.data(from: url)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw BenchError("\(url.path) answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
            }
            if decoding { try Self.check(try JSONDecoder().decode([Record].self, from: data)) }
            return Int64(data.count)
        case .courierAsyncHTTPClient, .courierURLSession, .observedCourierAsyncHTTPClient:
            guard let session = connections.session else { throw BenchError("no Courier session") }
            let request = session.request(url).validate()
            if decoding {
                let response = await request.serializingDecodable([Record].self).response
                try Self.check(try response.result.get())
                return Int64(response.data?.count ?? 0)
            }
            return Int64(try await request.serializingData().value.count)
        }
    }

    /// Uses the decoded records, so the decoding cannot be skipped, and checks them.
    private static func check(_ records: [Record]) throws {
        guard records.count == 160, records.last?.id == 160 else {
            throw BenchError("decoded \(records.count) records, not 160")
        }
    }
}
