import AsyncHTTPClient
import CourierTestServer
import Foundation

/// Writes the files a static server must serve for a run in the ``ServerLayout/files`` layout:
/// `courier-bench --write-files DIR` with the same workload and size options as the run.
enum StaticFiles {
    /// Writes into `folder` every file `plans` fetch, and the folder uploads go to. A file already
    /// there with the right size is kept, so a second run into the same folder is quick.
    static func write(for plans: [Orchestra.Plan], into folder: URL) async throws {
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent(ServerLayout.uploadFolder),
            withIntermediateDirectories: true
        )
        var written: Set<String> = []
        for plan in plans {
            let name: String
            let size: Int64
            switch plan.workload {
            case .sequential, .concurrent:
                (name, size) = (ServerLayout.smallBodyFile, Int64(ServerLayout.smallBodySize))
            case .decode: (name, size) = (ServerLayout.recordsFile, 0)
            case .download, .stream: (name, size) = (ServerLayout.bodyFile(of: plan.size), plan.size)
            case .upload, .multipart: continue  // PUTs into the upload folder, made above.
            }
            guard written.insert(name).inserted else { continue }
            let file = folder.appendingPathComponent(name)
            if plan.workload == .decode {
                try await fetchRecords().write(to: file)  // 64 KiB: always written anew.
            } else {
                guard (try? ClientRun.size(of: file)) != size else { continue }
                try ClientRun.writeFile(at: file, size: size)
            }
            Orchestra.say("wrote \(file.path)")
        }
    }

    /// The test server's own `/records/160` body, fetched from one started here, so both servers
    /// send the same bytes to the `decode` workload.
    private static func fetchRecords() async throws -> Data {
        let server = try await TestServer.start()
        do {
            let url = ServerLayout.testServer.records(on: server.baseURL)
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: url.absoluteString),
                timeout: .seconds(30)
            )
            guard response.status == .ok else { throw BenchError("\(url.path) answered \(response.status.code)") }
            let body = try await response.body.collect(upTo: 16 << 20)
            try await server.shutdown()
            return Data(body.readableBytesView)
        } catch {
            try? await server.shutdown()
            throw error
        }
    }
}
