import Courier
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Exchange {
    /// `--download`: streams the body straight into the output file, with a progress bar on a
    /// terminal's stderr and a summary line; `--continue` asks for the bytes after those the file
    /// holds and appends them (see ``ResumeDecision``).
    ///
    /// The body goes to the output file as it arrives, rather than through ``DownloadRequest``'s
    /// temporary file, so a download killed at any moment leaves a partial file that
    /// `--continue` can resume, as httpie users expect.
    func download(with session: Session) async -> Int32 {
        let path =
            options.outputPath
            ?? DownloadTarget.fileName(for: options.plan.url) {
                FileManager.default.fileExists(atPath: $0)
            }
        let existing: Int64 =
            options.resumes ? ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0) : 0
        var extra = HTTPHeaders()
        // Ranges count the bytes as stored: ask for them uncompressed.
        extra.add(name: "Accept-Encoding", value: "identity")
        if existing > 0 { extra.add(name: "Range", value: "bytes=\(existing)-") }
        let request = validatingForRetry(session.streamRequest(makeURLRequest(extraHeaders: extra)))

        var printer = ResponsePrinter(selection: options.selection.subtracting(.responseBody), terminal: terminal)
        var writer: DownloadWriter?
        let clock = ContinuousClock()
        let start = clock.now
        var failure: String?
        do {
            for try await piece in request.streamingData() {
                if writer == nil {
                    switch prepareWriter(for: request, path: path, existing: existing, printer: &printer) {
                    case .success(let made): writer = made
                    case .failure(let reason): failure = reason.message
                    }
                    if failure != nil { break }
                }
                try writer?.write(piece, elapsed: seconds(since: start, clock: clock))
            }
            if writer == nil, failure == nil {
                switch prepareWriter(for: request, path: path, existing: existing, printer: &printer) {
                case .success(let made): writer = made
                case .failure(let reason): failure = reason.message
                }
            }
        } catch let error as CourierError {
            writer?.close(terminal: terminal)
            if let code = error.responseCode {
                failure =
                    "HTTP \(code) \(HeadFormatter.reasonPhrase(for: code)) after \(Self.attempts(request.retryCount + 1))"
            } else {
                return report(describe(error), request)
            }
        } catch {
            writer?.close(terminal: terminal)
            return report("could not write \(path): \(error.localizedDescription)", request)
        }
        if let failure {
            writer?.close(terminal: terminal)
            let status = request.response?.statusCode ?? 0
            let code = ExitStatus.checked(statusCode: status, reason: "", followsRedirects: false)?.code
            return report("not saved to \(path): \(failure)", request, code: code ?? ExitStatus.failure)
        }
        guard let writer else { return report("no response", request) }
        writer.finish(elapsed: seconds(since: start, clock: clock), terminal: terminal)
        printTimings(request)
        return ExitStatus.success
    }

    /// Why a download does not write its file.
    private struct Refusal: Error {
        let message: String
    }

    /// Prints the head if asked and opens the output file as the response allows.
    private func prepareWriter(
        for request: DataStreamRequest,
        path: String,
        existing: Int64,
        printer: inout ResponsePrinter
    ) -> Result<DownloadWriter, Refusal> {
        guard let response = request.response else { return .failure(Refusal(message: "no response")) }
        printer.head(response, protocolName: request.metrics?.networkProtocolName)
        let decision = ResumeDecision.decide(
            existingBytes: existing,
            statusCode: response.statusCode,
            contentRange: response.value(forHTTPHeaderField: "Content-Range"),
            contentLength: response.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
        )
        let showsBar = terminal.stderrIsTerminal
        do {
            switch decision {
            case .append(let offset, let total):
                terminal.error("courier: resuming \(path) at \(ByteCount.format(offset))\n")
                return .success(
                    try DownloadWriter(path: path, offset: offset, total: total, showsBar: showsBar, terminal: terminal)
                )
            case .restart(let total):
                if existing > 0 { terminal.error("courier: the server sent the whole file; starting over\n") }
                return .success(
                    try DownloadWriter(path: path, offset: 0, total: total, showsBar: showsBar, terminal: terminal)
                )
            case .alreadyComplete(let total):
                terminal.error("courier: \(path) is already complete (\(ByteCount.format(total)))\n")
                return .success(
                    try DownloadWriter(
                        path: path,
                        offset: total,
                        total: total,
                        showsBar: false,
                        terminal: terminal,
                        keepsBody: false
                    )
                )
            case .refuse(let reason):
                return .failure(Refusal(message: reason))
            }
        } catch {
            return .failure(Refusal(message: "cannot open the file (\(error.localizedDescription))"))
        }
    }

    private func report(_ message: String, _ request: Request, code: Int32 = ExitStatus.failure) -> Int32 {
        terminal.error(terminal.errorStyle.paint("courier: error: ", .failure) + message + "\n")
        printTimings(request)
        return code
    }

    private func seconds(since start: ContinuousClock.Instant, clock: ContinuousClock) -> Double {
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
