// Names as people see them: each class of control that can move a cursor or reorder text on screen has its
// exact escape, in paths (PathEscaping) and in report text (PrintableText). Machine formats keep the bytes.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Escaping names for people") struct EscapingTests {
    @Test("every control class in a name has its exact escape", arguments: [
        ("plain-é.txt", "plain-é.txt"),
        ("c0-\u{1B}[2J", "c0-\\x1b[2J"),
        ("del-\u{7F}", "del-\\x7f"),
        ("nl-\n-tab-\t", "nl-\\n-tab-\\t"),
        ("c1-\u{80}-\u{85}-\u{9B}-\u{9F}", "c1-\\u{80}-\\u{85}-\\u{9B}-\\u{9F}"),
        ("\u{202A}lre\u{202B}rle\u{202C}pdf\u{202D}lro\u{202E}rlo", "\\u{202A}lre\\u{202B}rle\\u{202C}pdf\\u{202D}lro\\u{202E}rlo"),
        ("\u{2066}lri\u{2067}rli\u{2068}fsi\u{2069}pdi", "\\u{2066}lri\\u{2067}rli\\u{2068}fsi\\u{2069}pdi"),
        ("lrm\u{200E}rlm\u{200F}alm\u{061C}", "lrm\\u{200E}rlm\\u{200F}alm\\u{61C}"),
        ("just-outside-\u{A0}\u{2029}\u{206A}", "just-outside-\u{A0}\u{2029}\u{206A}"),
    ] as [(String, String)])
    func paths(name: String, shown: String) {
        #expect(PathEscaping.escape(Array(name.utf8)) == shown)
    }

    @Test("an invalid byte and a valid C1 character are told apart")
    func invalidVersusC1() {
        #expect(PathEscaping.escape([0x61, 0x85, 0x62]) == "a\\x85b")
        #expect(PathEscaping.escape([0x61, 0xC2, 0x85, 0x62]) == "a\\u{85}b")
    }

    @Test("report text escapes C0, C1 and bidi controls and leaves other text alone", arguments: [
        ("ok ünïcode", "ok ünïcode"),
        ("\u{1B}[31mred", "\\x1b[31mred"),
        ("nel\u{85}", "nel\\x85"),
        ("a\u{202E}b\u{2066}c\u{2069}d\u{200F}", "a\\u{202E}b\\u{2066}c\\u{2069}d\\u{200F}"),
    ] as [(String, String)])
    func reportText(text: String, shown: String) {
        #expect(PrintableText.escapingControls(text) == shown)
    }
}
