import Courier
import Foundation

extension DemoTour {
    /// `/upload/multipart`'s reply: a summary of each part it parsed.
    struct Receipt: Decodable, Sendable {
        struct Part: Decodable, Sendable {
            let name: String
            let filename: String?
            let contentType: String?
            let bytes: Int
            let sha256: String
        }

        let parts: [Part]
        let bytes: Int
    }

    /// One line of `/stream/:n`.
    struct Line: Decodable, Sendable {
        let id: Int
        let url: String
    }

    /// Downloads a paced body, cancels at 40 % keeping resume data, resumes, and checks the bytes.
    func download(with session: Session) async throws {
        printer.heading(4, "A download with a progress bar, interrupted and resumed")
        let length = 3_000_000
        printer.code(
            """
            let destination = DownloadRequest.suggestedDownloadDestination(in: folder, options: .removePreviousFile)
            let download = session.download("\(base)/range/\(length)?duration=2", to: destination).resume()
            for await progress in download.downloadProgressUpdates() {
                if progress.fractionCompleted >= 0.4 { break }   // … and then the connection is "lost"
            }
            download.cancel(byProducingResumeData: { data in … })   // keeps the partial file
            let resumed = session.download(resumingWith: data, to: destination)   // Range + If-Range
            let file = try await resumed.serializingDownloadedFileURL().value
            """
        )
        let destination = DownloadRequest.suggestedDownloadDestination(in: folder, options: .removePreviousFile)
        let url = server.url("/range/\(length)?duration=2")
        let clock = ContinuousClock()
        let start = clock.now
        let first = session.download(url, to: destination).resume()
        var bar = ProgressBar(totalBytes: Int64(length), style: terminal.outputStyle)
        var received: Int64 = 0
        for await progress in first.downloadProgressUpdates() {
            received = progress.completedUnitCount
            draw(&bar, bytes: received, since: start, clock: clock)
            if progress.fractionCompleted >= 0.4 { break }
        }
        let resumeData: Data? = await withCheckedContinuation { continuation in
            first.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
        }
        endBar()
        guard let resumeData else { throw StepFailure(description: "the cancelled download made no resume data") }
        let kept = (try? DownloadResumeData(data: resumeData).bytesReceived) ?? received
        printer.result(
            "interrupted at \(ByteCount.format(kept)) of \(ByteCount.format(Int64(length))); "
                + "resume data: \(resumeData.count) bytes of JSON"
        )

        let resumed = session.download(resumingWith: resumeData, to: destination)
        let file = resumed.serializingDownloadedFileURL()
        let restart = clock.now
        var resumedBar = ProgressBar(initialBytes: kept, totalBytes: Int64(length), style: terminal.outputStyle)
        for await progress in resumed.downloadProgressUpdates() {
            draw(&resumedBar, bytes: progress.completedUnitCount, since: restart, clock: clock)
        }
        let saved = try await file.value
        if terminal.stdoutIsTerminal {
            terminal.output(
                "\r    "
                    + resumedBar.render(bytes: Int64(length), elapsed: elapsedSeconds(since: restart, clock: clock))
                    + "\u{1B}[K"
            )
        }
        endBar()
        let bytes = try Data(contentsOf: saved)
        let expected = Data((0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        let matches = bytes == expected
        printer.result(
            "resumed with Range: bytes=\(kept)- and saved \(ByteCount.format(Int64(bytes.count))) as "
                + "\(saved.lastPathComponent); the bytes match the server's: \(matches ? "yes" : "NO")"
        )
        guard matches else { throw StepFailure(description: "the resumed download differs from the body") }
    }

    /// Uploads a text field and a file as a multipart form and shows what the server parsed.
    func upload(with session: Session) async throws {
        printer.heading(5, "A multipart upload")
        printer.code(
            """
            let receipt = try await session.upload(multipartFormData: { form in
                form.append(Data("Ada".utf8), withName: "name")
                form.append(notesURL, withName: "notes")   // notes.txt, text/plain
            }, to: "\(base)/upload/multipart").validate().serializingDecodable(Receipt.self).value
            """
        )
        let notes = folder.appendingPathComponent("notes.txt")
        try Data(String(repeating: "Courier streams what it sends.\n", count: 40).utf8).write(to: notes)
        let receipt = try await session.upload(
            multipartFormData: { form in
                form.append(Data("Ada".utf8), withName: "name")
                form.append(notes, withName: "notes")
            },
            to: server.url("/upload/multipart")
        ).validate().serializingDecodable(Receipt.self).value
        for part in receipt.parts {
            let file = part.filename.map { ", \($0)" } ?? ""
            let type = part.contentType.map { ", \($0)" } ?? ""
            printer.result(
                "part \"\(part.name)\"\(file)\(type): \(part.bytes) bytes, sha256 \(part.sha256.prefix(12))…"
            )
        }
        guard receipt.parts.map(\.name) == ["name", "notes"] else {
            throw StepFailure(description: "the server saw parts \(receipt.parts.map(\.name))")
        }
    }

    /// Reads a JSON-lines stream, one decoded value per line as it arrives.
    func stream(with session: Session) async throws {
        printer.heading(6, "A JSON-lines stream")
        printer.code(
            """
            struct Line: Decodable { let id: Int; let url: String }
            for try await line in session.streamRequest("\(base)/stream/5").validate().streamingDecodable(Line.self) {
                print(line.id)
            }
            """
        )
        var ids: [Int] = []
        for try await line in session.streamRequest(server.url("/stream/5")).validate().streamingDecodable(Line.self) {
            ids.append(line.id)
            printer.result("line \(line.id): \(line.url)")
        }
        guard ids == [0, 1, 2, 3, 4] else { throw StepFailure(description: "the stream gave ids \(ids)") }
    }

    /// Redraws the bar in place, on a terminal only (a pipe gets just the result lines).
    private func draw(
        _ bar: inout ProgressBar,
        bytes: Int64,
        since start: ContinuousClock.Instant,
        clock: ContinuousClock
    ) {
        guard terminal.stdoutIsTerminal,
            let frame = bar.frame(bytes: bytes, elapsed: elapsedSeconds(since: start, clock: clock))
        else { return }
        terminal.output("\r    " + frame + "\u{1B}[K")
    }

    /// Ends the bar's line.
    private func endBar() {
        if terminal.stdoutIsTerminal { terminal.output("\n") }
    }

    private func elapsedSeconds(since start: ContinuousClock.Instant, clock: ContinuousClock) -> Double {
        let elapsed = (clock.now - start).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }
}
