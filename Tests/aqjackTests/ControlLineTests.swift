import AQControl
import Testing

@Suite("Control socket lines (no server needed)")
struct ControlLineTests {
    @Test("words split on spaces and tabs; a quoted word keeps its spaces, \\\" and \\\\; a trailing CR is dropped; quoted() writes back what words() reads")
    func words() throws {
        #expect(try ControlLine.words(Array("set  lim\tingain -3\r".utf8)) == ["set", "lim", "ingain", "-3"])
        #expect(try ControlLine.words(Array(#"preset 1 "Hall \"big\" \\ 2" """#.utf8)) == ["preset", "1", #"Hall "big" \ 2"#, ""])
        #expect(try ControlLine.words([]) == [])
        for word in ["plain", "two words", #"a "quote""#, #"back\slash"#, "", "ü-tf8"] {
            #expect(try ControlLine.words(Array(ControlLine.quoted(word).utf8)) == [word])
        }
        #expect(ControlLine.ok(["lim", "a b"]) == #"ok lim "a b""#)
        #expect(ControlLine.error("invalid", "two\nlines") == "error invalid two lines")
    }

    @Test("what a line cannot be is named: not UTF-8, a control character (with its column), an unclosed quote, a quote inside a word, an escape other than \\\" and \\\\")
    func malformed() {
        func refusal(_ bytes: [UInt8]) -> String {
            do { return "words \(try ControlLine.words(bytes))" } catch { return error.description }
        }
        #expect(refusal([0x61, 0xC3]) == "the line is not UTF-8 text")
        #expect(refusal(Array("get 1\u{7}x".utf8)) == "a control character (byte 7) at column 6; expected printable text")
        #expect(refusal(Array(#"preset 1 "Hall"#.utf8)) == #"a quote opened and not closed; expected a closing ""#)
        #expect(refusal(Array(#"set a"b 1"#.utf8)) == "a quote inside a word at column 6; quote the whole word")
        #expect(refusal(Array(#"preset 1 "a\nb""#.utf8)) == #"'\n' at column 12: inside quotes only \" and \\ are escapes"#)
    }
}
