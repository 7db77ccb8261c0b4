import Foundation

extension String.Encoding {
    /// The encoding an IANA charset name stands for (a `Content-Type`'s `charset`, say), or `nil`
    /// for a name Courier does not know: never a guess.
    ///
    /// Names are matched without regard to case, quotes or surrounding spaces, aliases included
    /// (`latin1`, `cp1252`, `csShiftJIS`…). Covered: UTF-8, UTF-16 and UTF-32 (with and without a
    /// byte order), US-ASCII, ISO-8859-1 to -16, Windows-1250 to -1258, KOI8-R and KOI8-U,
    /// Shift_JIS, EUC-JP, ISO-2022-JP, GB2312, GBK and GB18030 (all read as GB18030, their superset,
    /// as the WHATWG Encoding Standard does: pages labelled GB2312 often hold GBK), Big5, EUC-KR
    /// (read as its superset Windows-949, likewise) and Macintosh.
    ///
    /// Foundation decodes all of them on Apple platforms; on Linux, all but EUC-JP, whose text
    /// then fails to decode (``CourierError/Kind/responseSerializationFailed``) rather than being
    /// read as something else.
    public init?(ianaCharsetName name: String) {
        let key = name.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            .lowercased()
        guard let encoding = Self.ianaNames[key] else { return nil }
        self = encoding
    }

    /// A CoreFoundation encoding (`CFStringEncoding`) as a `String.Encoding`, which Foundation
    /// reads on every platform.
    private static func coreFoundation(_ value: UInt) -> String.Encoding {
        String.Encoding(rawValue: 0x8000_0000 | value)
    }

    /// Every name and alias, lowercased, from IANA's character set registry.
    private static let ianaNames: [String: String.Encoding] = {
        var names: [String: String.Encoding] = [:]
        func add(_ encoding: String.Encoding, _ aliases: String...) {
            for alias in aliases { names[alias] = encoding }
        }
        add(.utf8, "utf-8", "utf8", "unicode-1-1-utf-8", "csutf8")
        add(.utf16, "utf-16", "utf16", "csutf16")
        add(.utf16BigEndian, "utf-16be", "csutf16be")
        add(.utf16LittleEndian, "utf-16le", "csutf16le")
        add(.utf32, "utf-32", "utf32", "csutf32")
        add(.utf32BigEndian, "utf-32be", "csutf32be")
        add(.utf32LittleEndian, "utf-32le", "csutf32le")
        add(
            .ascii,
            "us-ascii",
            "ascii",
            "ansi_x3.4-1968",
            "ansi_x3.4-1986",
            "iso-ir-6",
            "iso_646.irv:1991",
            "iso646-us",
            "us",
            "ibm367",
            "cp367",
            "csascii"
        )
        add(
            .isoLatin1,
            "iso-8859-1",
            "iso_8859-1",
            "iso_8859-1:1987",
            "iso-ir-100",
            "latin1",
            "l1",
            "ibm819",
            "cp819",
            "csisolatin1"
        )
        add(.isoLatin2, "iso-8859-2", "iso_8859-2", "iso_8859-2:1987", "iso-ir-101", "latin2", "l2", "csisolatin2")
        add(
            coreFoundation(0x0203),
            "iso-8859-3",
            "iso_8859-3",
            "iso_8859-3:1988",
            "iso-ir-109",
            "latin3",
            "l3",
            "csisolatin3"
        )
        add(
            coreFoundation(0x0204),
            "iso-8859-4",
            "iso_8859-4",
            "iso_8859-4:1988",
            "iso-ir-110",
            "latin4",
            "l4",
            "csisolatin4"
        )
        add(
            coreFoundation(0x0205),
            "iso-8859-5",
            "iso_8859-5",
            "iso_8859-5:1988",
            "iso-ir-144",
            "cyrillic",
            "csisolatincyrillic"
        )
        add(
            coreFoundation(0x0206),
            "iso-8859-6",
            "iso_8859-6",
            "iso_8859-6:1987",
            "iso-ir-127",
            "ecma-114",
            "asmo-708",
            "arabic",
            "csisolatinarabic"
        )
        add(
            coreFoundation(0x0207),
            "iso-8859-7",
            "iso_8859-7",
            "iso_8859-7:1987",
            "iso-ir-126",
            "elot_928",
            "ecma-118",
            "greek",
            "greek8",
            "csisolatingreek"
        )
        add(
            coreFoundation(0x0208),
            "iso-8859-8",
            "iso_8859-8",
            "iso_8859-8:1988",
            "iso-ir-138",
            "hebrew",
            "csisolatinhebrew"
        )
        add(
            coreFoundation(0x0209),
            "iso-8859-9",
            "iso_8859-9",
            "iso_8859-9:1989",
            "iso-ir-148",
            "latin5",
            "l5",
            "csisolatin5"
        )
        add(
            coreFoundation(0x020A),
            "iso-8859-10",
            "iso_8859-10:1992",
            "iso-ir-157",
            "latin6",
            "l6",
            "csisolatin6"
        )
        add(coreFoundation(0x020B), "iso-8859-11")
        add(coreFoundation(0x020D), "iso-8859-13", "csiso885913")
        add(
            coreFoundation(0x020E),
            "iso-8859-14",
            "iso_8859-14",
            "iso_8859-14:1998",
            "iso-ir-199",
            "latin8",
            "l8",
            "iso-celtic",
            "csiso885914"
        )
        add(coreFoundation(0x020F), "iso-8859-15", "iso_8859-15", "latin-9", "csiso885915")
        add(
            coreFoundation(0x0210),
            "iso-8859-16",
            "iso_8859-16",
            "iso_8859-16:2001",
            "iso-ir-226",
            "latin10",
            "l10",
            "csiso885916"
        )
        add(.windowsCP1250, "windows-1250", "cp1250", "x-cp1250", "cswindows1250")
        add(.windowsCP1251, "windows-1251", "cp1251", "x-cp1251", "cswindows1251")
        add(.windowsCP1252, "windows-1252", "cp1252", "x-cp1252", "cswindows1252")
        add(.windowsCP1253, "windows-1253", "cp1253", "x-cp1253", "cswindows1253")
        add(.windowsCP1254, "windows-1254", "cp1254", "x-cp1254", "cswindows1254")
        add(coreFoundation(0x0505), "windows-1255", "cp1255", "x-cp1255", "cswindows1255")
        add(coreFoundation(0x0506), "windows-1256", "cp1256", "x-cp1256", "cswindows1256")
        add(coreFoundation(0x0507), "windows-1257", "cp1257", "x-cp1257", "cswindows1257")
        add(coreFoundation(0x0508), "windows-1258", "cp1258", "x-cp1258", "cswindows1258")
        add(coreFoundation(0x0A02), "koi8-r", "cskoi8r")
        add(coreFoundation(0x0A08), "koi8-u", "cskoi8u")
        add(.shiftJIS, "shift_jis", "shift-jis", "sjis", "ms_kanji", "csshiftjis")
        add(.japaneseEUC, "euc-jp", "extended_unix_code_packed_format_for_japanese", "cseucpkdfmtjapanese")
        add(.iso2022JP, "iso-2022-jp", "csiso2022jp")
        add(
            coreFoundation(0x0632),
            "gb18030",
            "csgb18030",
            "gbk",
            "gb2312",
            "csgb2312",
            "euc-cn",
            "cp936",
            "ms936",
            "windows-936",
            "csgbk"
        )
        add(coreFoundation(0x0A03), "big5", "csbig5")
        // EUC-KR labels read as Windows-949, its superset, as the WHATWG Encoding Standard does:
        // pages labelled EUC-KR often hold its extra characters.
        add(coreFoundation(0x0422), "euc-kr", "cseuckr", "windows-949", "cp949", "ks_c_5601-1987")
        #if canImport(FoundationNetworking)
        // swift-corelibs-foundation reads `.macOSRoman` as another table; CoreFoundation's own
        // MacRoman (0) decodes it right there.
        let macRoman = coreFoundation(0)
        #else
        let macRoman = String.Encoding.macOSRoman
        #endif
        add(macRoman, "macintosh", "mac", "csmacintosh")
        return names
    }()
}
