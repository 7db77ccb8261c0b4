import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct DownloadDestinationTests {
    @Test(arguments: [
        ("attachment; filename=\"report.pdf\"", "report.pdf"),
        ("attachment; filename=plain.txt", "plain.txt"),
        ("attachment; filename=\"quoted \\\"name\\\".txt\"", "quoted \"name\".txt"),
        ("attachment; filename=\"fallback.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
        ("attachment; filename*=iso-8859-1'en'%A3%20rates.txt", "£ rates.txt"),
        ("inline; FILENAME=\"upper.txt\"", "upper.txt"),
    ])
    func contentDispositionFileNames(header: String, expected: String) {
        #expect(ContentDisposition.fileName(in: header) == expected)
    }

    @Test func contentDispositionWithoutAFileName() {
        #expect(ContentDisposition.fileName(in: "attachment") == nil)
        #expect(ContentDisposition.fileName(in: "attachment; size=10") == nil)
    }

    @Test(
        arguments: [
            ("../../etc/passwd", "passwd"),
            ("..\\..\\windows\\system.ini", "system.ini"),
            ("/absolute/path.txt", "path.txt"),
            ("..", nil),
            (".hidden", "hidden"),
            ("bad\u{0}name\n.txt", "badname.txt"),
            ("   ", nil),
            ("normal.zip", "normal.zip"),
            (" .bashrc", "bashrc"),
            ("\t.profile ", "profile"),
            (" ..", nil),
            (" . . ", nil),
            ("...", nil),
            ("dir/ ..", nil),
            (". .hidden", "hidden"),
            ("report. pdf", "report. pdf"),
            // A slash with a joiner or a combining mark after it is one character, not a slash.
            ("a/\u{200D}../\u{200D}../\u{200D}x", "x"),
            ("a/\u{301}../\u{301}x", "\u{301}x"),
            (".\u{301}bashrc", "\u{301}bashrc"),
            ("\u{200D}.\u{200D}.", nil),
        ] as [(String, String?)]
    )
    func fileNamesAreSanitized(name: String, expected: String?) {
        let sanitized = DownloadRequest.sanitizedFileName(name)
        #expect(sanitized == expected)
        #expect(sanitized.map { !$0.unicodeScalars.contains("/") && !$0.unicodeScalars.contains("\\") } ?? true)
    }

    /// Through a server's header, as a download would read it: nothing may leave the folder.
    @Test func aJoinerCannotSmuggleASlashThroughTheHeader() throws {
        let header = "attachment; filename*=UTF-8''a/%E2%80%8D../%E2%80%8D../%E2%80%8Dx"
        let name = try #require(ContentDisposition.fileName(in: header))
        #expect(DownloadRequest.sanitizedFileName(name) == "x")
    }

    @Test(arguments: ["é", "€", "🚀", "a\u{301}", "x"])
    func longNamesAreCutToWholeCharactersWithin255Bytes(character: String) throws {
        let name = try #require(DownloadRequest.sanitizedFileName(String(repeating: character, count: 300) + ".txt"))
        #expect(name.utf8.count <= 255)
        #expect(name.utf8.count > 255 - character.utf8.count, "as long as whole characters allow")
        #expect(name == String(repeating: character, count: name.count), "whole characters only")
        #expect(String(validating: Array(name.utf8), as: UTF8.self) != nil)
    }

    @Test(arguments: [
        ("attachment; filename=\"unterminated", "unterminated"),
        ("attachment; filename=\"ends in backslash\\", "ends in backslash"),
        ("attachment; novalue; filename=a.txt", "a.txt"),
        ("attachment; filename=\"a.txt\" ; size=3", "a.txt"),
        ("attachment;filename*=UTF-8''%ZZ.txt", "%ZZ.txt"),
        ("attachment; filename*=UTF-8''%FF.txt; filename=fallback.txt", "fallback.txt"),
        ("attachment; filename*=koi8-r''x.txt; filename=plain.txt", "plain.txt"),
        ("attachment; filename=\"\u{301}name.txt\"", "\u{301}name.txt"),
    ])
    func contentDispositionOddities(header: String, expected: String) {
        #expect(ContentDisposition.fileName(in: header) == expected)
    }

    /// A megabyte of parameters, or of one unterminated quoted value, parses in linear time:
    /// seconds at most even in a loaded debug build.
    @Test func contentDispositionParsesInLinearTime() async throws {
        let manyParameters = "attachment" + String(repeating: "; a=b", count: 200_000) + "; filename=last.txt"
        let openQuote = "attachment; filename=\"" + String(repeating: "\\x", count: 300_000)
        let noEquals = "attachment" + String(repeating: ";", count: 1_000_000)
        let (names, elapsed) = try await offThePool {
            [
                ContentDisposition.fileName(in: manyParameters), ContentDisposition.fileName(in: openQuote),
                ContentDisposition.fileName(in: noEquals),
            ]
        }
        #expect(names[0] == "last.txt")
        #expect(names[1]?.utf8.count == 300_000)
        #expect(names[2] == nil)
        #expect(elapsed < .seconds(60), "took \(elapsed)")
    }

    @Test func contentRangeHeaders() {
        #expect(ContentRange("bytes 100-199/1000") == ContentRange(start: 100, completeLength: 1000))
        #expect(ContentRange("bytes 0-9/*")?.completeLength == nil)
        #expect(ContentRange("bytes */1000") == nil)
        #expect(ContentRange("items 1-2/3") == nil)
        #expect(ContentRange(nil) == nil)
    }

    @Test func resumeDataRoundTripsWithoutCredentials() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(DownloadFile.folderName)
        try PrivateFolder.prepare(folder)
        let file = folder.appendingPathComponent("\(UUID().uuidString).download")
        try Data("partial".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/file")))
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        request.setValue("a=b", forHTTPHeaderField: "Cookie")
        request.setValue("courier", forHTTPHeaderField: "User-Agent")
        let data = try DownloadResumeData(
            request: request,
            bytesReceived: 7,
            temporaryFilePath: file.path,
            entityTag: "\"v1\"",
            lastModified: nil,
            expectedLength: 100
        ).encoded()
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("secret") && !text.contains("a=b"))
        let decoded = try DownloadResumeData(data: data)
        #expect(decoded.headers == ["User-Agent": "courier"])
        #expect(decoded.bytesReceived == 7 && decoded.entityTag == "\"v1\"" && decoded.expectedLength == 100)
        #expect(decoded.version == DownloadResumeData.currentVersion)
    }
}
