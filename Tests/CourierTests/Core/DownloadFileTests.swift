import Foundation
import Testing

@testable import Courier

@Suite struct DownloadFileTests {
    /// A new, empty folder for one test, removed afterwards.
    private func withRoot(_ body: (URL) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "DownloadFileTests-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try body(root)
    }

    private func mode(_ url: URL) -> Int {
        var status = stat()
        guard lstat(url.path, &status) == 0 else { return -1 }
        return Int(status.st_mode & 0o777)
    }

    /// Opens `file` on its queue and returns the write error, if any, with the file closed again.
    private func openError(_ file: DownloadFile) -> (any Error)? {
        file.queue.sync {
            file.open(keepingBytes: 0)
            file.write(Data("secret".utf8))
            defer { file.close() }
            return file.writeError
        }
    }

    @Test func theFolderAndFileAreMadePrivate() throws {
        try withRoot { root in
            let file = DownloadFile.makeTemporary(in: root)
            #expect(file.url.deletingLastPathComponent().lastPathComponent == "CourierDownloads-\(geteuid())")
            #expect(openError(file) == nil)
            #expect(mode(file.url.deletingLastPathComponent()) == 0o700)
            #expect(mode(file.url) == 0o600)
            #expect((try? Data(contentsOf: file.url)) == Data("secret".utf8))
        }
    }

    @Test func anOpenFolderOfOursIsClosed() throws {
        try withRoot { root in
            let folder = root.appendingPathComponent(DownloadFile.folderName)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            #expect(chmod(folder.path, 0o777) == 0)
            let existing = folder.appendingPathComponent("old.download")
            try Data("partial".utf8).write(to: existing)
            #expect(chmod(existing.path, 0o644) == 0)
            let file = DownloadFile(url: existing, existingLength: 7)
            #expect(openError(file) == nil)
            #expect(mode(folder) == 0o700)
            #expect(mode(existing) == 0o600, "made private before a byte is written")
        }
    }

    @Test func aFolderThatIsALinkIsRefused() throws {
        try withRoot { root in
            let target = root.appendingPathComponent("target")
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
            let folder = root.appendingPathComponent(DownloadFile.folderName)
            try FileManager.default.createSymbolicLink(at: folder, withDestinationURL: target)
            let error = openError(DownloadFile.makeTemporary(in: root))
            #expect(error is PrivateFolder.Refusal)
            #expect(error?.localizedDescription.contains("symbolic link") == true)
            #expect(
                (try? FileManager.default.contentsOfDirectory(atPath: target.path))?.isEmpty == true,
                "nothing written there"
            )
            #expect(
                CourierError.downloadFileWriteFailed(try #require(error)).localizedDescription.contains(folder.path)
            )
        }
    }

    @Test func aFileInPlaceOfTheFolderIsRefused() throws {
        try withRoot { root in
            try Data().write(to: root.appendingPathComponent(DownloadFile.folderName))
            #expect(openError(DownloadFile.makeTemporary(in: root)) is PrivateFolder.Refusal)
        }
    }

    @Test func aFileThatIsALinkIsRefused() throws {
        try withRoot { root in
            let folder = root.appendingPathComponent(DownloadFile.folderName)
            try PrivateFolder.prepare(folder)
            let victim = root.appendingPathComponent("victim")
            try Data("keep".utf8).write(to: victim)
            let planted = folder.appendingPathComponent("planted.download")
            try FileManager.default.createSymbolicLink(at: planted, withDestinationURL: victim)
            #expect(openError(DownloadFile(url: planted)) != nil)
            #expect((try? Data(contentsOf: victim)) == Data("keep".utf8))
        }
    }

    @Test func aMissingTemporaryDirectoryIsMade() throws {
        try withRoot { root in
            let file = DownloadFile.makeTemporary(in: root.appendingPathComponent("not/yet"))
            #expect(openError(file) == nil)
            #expect(mode(file.url.deletingLastPathComponent()) == 0o700)
        }
    }
}
