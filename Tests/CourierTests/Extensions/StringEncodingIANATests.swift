import Courier
import Foundation
import Testing

/// `String.Encoding(ianaCharsetName:)`: every name decodes its own text, on this platform.
@Suite struct StringEncodingIANATests {
    /// A charset name, bytes in it, and the text they are.
    struct Sample: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let text: String
        var testDescription: String { name }
    }

    static let samples: [Sample] = [
        Sample(name: "utf-8", bytes: [0xC3, 0xA9], text: "é"),
        Sample(name: "UTF-16BE", bytes: [0x00, 0x41], text: "A"),
        Sample(name: "utf-16le", bytes: [0x41, 0x00], text: "A"),
        Sample(name: "utf-32be", bytes: [0, 0, 0, 0x41], text: "A"),
        Sample(name: "utf-32le", bytes: [0x41, 0, 0, 0], text: "A"),
        Sample(name: "us-ascii", bytes: [0x41], text: "A"),
        Sample(name: "latin1", bytes: [0xE9], text: "é"),
        Sample(name: "ISO-8859-2", bytes: [0xB1], text: "ą"),
        Sample(name: "iso-8859-3", bytes: [0xA1], text: "Ħ"),
        Sample(name: "iso-8859-4", bytes: [0xA1], text: "Ą"),
        Sample(name: "iso-8859-5", bytes: [0xD0], text: "а"),
        Sample(name: "iso-8859-6", bytes: [0xC7], text: "ا"),
        Sample(name: "iso-8859-7", bytes: [0xE1], text: "α"),
        Sample(name: "iso-8859-8", bytes: [0xE0], text: "א"),
        Sample(name: "iso-8859-9", bytes: [0xFD], text: "ı"),
        Sample(name: "iso-8859-10", bytes: [0xA1], text: "Ą"),
        Sample(name: "iso-8859-11", bytes: [0xA1], text: "ก"),
        Sample(name: "iso-8859-13", bytes: [0xE0], text: "ą"),
        Sample(name: "iso-8859-14", bytes: [0xA1], text: "Ḃ"),
        Sample(name: "latin-9", bytes: [0xA4], text: "€"),
        Sample(name: "iso-8859-16", bytes: [0xA1], text: "Ą"),
        Sample(name: "windows-1250", bytes: [0xB9], text: "ą"),
        Sample(name: "cp1251", bytes: [0xE0], text: "а"),
        Sample(name: "windows-1252", bytes: [0x80], text: "€"),
        Sample(name: "windows-1253", bytes: [0xE1], text: "α"),
        Sample(name: "windows-1254", bytes: [0xFD], text: "ı"),
        Sample(name: "windows-1255", bytes: [0xE0], text: "א"),
        Sample(name: "windows-1256", bytes: [0xC7], text: "ا"),
        Sample(name: "windows-1257", bytes: [0xE0], text: "ą"),
        Sample(name: "windows-1258", bytes: [0xE0], text: "à"),
        Sample(name: "koi8-r", bytes: [0xC1], text: "а"),
        Sample(name: "koi8-u", bytes: [0xA4], text: "є"),
        Sample(name: "Shift_JIS", bytes: [0x93, 0xFA], text: "日"),
        Sample(name: "iso-2022-jp", bytes: [0x1B, 0x24, 0x42, 0x46, 0x7C, 0x4B, 0x5C, 0x1B, 0x28, 0x42], text: "日本"),
        Sample(name: "gb2312", bytes: [0xC4, 0xE3], text: "你"),
        Sample(name: "gbk", bytes: [0xC4, 0xE3], text: "你"),
        Sample(name: "gb18030", bytes: [0xC4, 0xE3], text: "你"),
        Sample(name: "big5", bytes: [0xA4, 0xA4], text: "中"),
        Sample(name: "euc-kr", bytes: [0xC7, 0xD1, 0x81, 0x41], text: "한갂"),
        Sample(name: "gb2312", bytes: [0x81, 0x40], text: "丂"),
        Sample(name: "macintosh", bytes: [0x8E], text: "é"),
    ]

    @Test(arguments: samples)
    func eachNameDecodesItsText(sample: Sample) throws {
        let encoding = try #require(String.Encoding(ianaCharsetName: sample.name))
        #expect(String(data: Data(sample.bytes), encoding: encoding) == sample.text)
    }

    @Test func eucJPIsKnownAndDecodedWhereFoundationCan() throws {
        let encoding = try #require(String.Encoding(ianaCharsetName: "EUC-JP"))
        #expect(encoding == .japaneseEUC)
        let decoded = String(data: Data([0xC6, 0xFC, 0xCB, 0xDC]), encoding: encoding)
        #if canImport(FoundationNetworking)
        #expect(decoded == nil, "swift-corelibs-foundation cannot read EUC-JP: nothing is guessed")
        #else
        #expect(decoded == "日本")
        #endif
    }

    @Test func namesAreMatchedLooselyAndUnknownOnesAreNil() {
        #expect(String.Encoding(ianaCharsetName: "  \"UTF-8\" ") == .utf8)
        #expect(String.Encoding(ianaCharsetName: "CP1252") == .windowsCP1252)
        #expect(String.Encoding(ianaCharsetName: "csShiftJIS") == .shiftJIS)
        for unknown in ["", "utf-7", "x-user-defined", "latin", "iso-8859-12", "utf-8 ; q=1"] {
            #expect(String.Encoding(ianaCharsetName: unknown) == nil, "\(unknown)")
        }
    }
}
