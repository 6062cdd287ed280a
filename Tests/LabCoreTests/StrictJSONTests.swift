import Foundation
import LabCore
import LabTestSupport
import Testing

/// `StrictJSON` against cases in the manner of JSONTestSuite: `y_` texts it must accept, `n_`
/// texts it must refuse, each refusal with its line, column and what was expected there.
@Suite(.tier(.unit)) struct StrictJSONTests {
    static let accepted: [(name: String, text: String)] = [
        ("y_object_empty", "{}"),
        ("y_array_empty", "[]"),
        ("y_array_nested", "[[[]], {}, [{}]]"),
        ("y_object_nested", #"{"a": {"b": {"c": [1, 2, {"d": null}]}}}"#),
        ("y_structure_whitespace", " \t\r\n{ \"a\" : 1 } \n"),
        ("y_number_zero", "0"),
        ("y_number_negative_zero", "-0"),
        ("y_number_fraction", "[0.5, -12.25, 10.0]"),
        ("y_number_exponents", "[1e5, 1E-5, 2.5e+10, 0e0]"),
        ("y_number_large", "[123456789012345678901234567890]"),
        ("y_string_escapes", #"["\" \\ \/ \b \f \n \r \t"]"#),
        ("y_string_unicode_escape", #"["\u00e9\u4E2D"]"#),
        ("y_string_surrogate_pair", #"["\uD83D\uDE00"]"#),
        ("y_string_utf8", "[\"µs · 時間 😀\"]"),
        ("y_string_del", "[\"\u{7F}\"]"),
        ("y_literals", "[true, false, null]"),
        ("y_scalar_string", #""text""#),
        ("y_keys_differ_in_case", #"{"a": 1, "A": 2}"#),
        ("y_same_key_in_two_objects", #"[{"a": 1}, {"a": 2}]"#),
        ("y_same_key_nested", #"{"a": {"a": 1}}"#),
    ]

    /// Each refused text, the line and column it breaks at, and words the message must hold.
    static let refused: [(name: String, text: String, line: Int, column: Int, expected: String)] = [
        ("n_empty", "", 1, 1, "expected a JSON value, found the end of the file"),
        ("n_whitespace_only", " \n ", 2, 2, "expected a JSON value, found the end of the file"),
        ("n_array_trailing_comma", "[1, 2,]", 1, 7, "expected a value after ',', found ']' (JSON allows no comma"),
        ("n_object_trailing_comma", "{\"a\": 1,\n}", 2, 1, "expected a key after ',', found '}' (JSON allows no comma"),
        ("n_object_missing_comma", "{\n  \"clients\": {}\n  \"load\": {}\n}", 3, 3,
            "expected ',' or '}' after the value of \"clients\", found '\"load\"'"),
        ("n_array_missing_comma", "{\"flows\": [1 2]}", 1, 14, "expected ',' or ']' after element [0] of \"flows\""),
        ("n_nested_array_name", "{\"flows\": [{\"m\": [1 2]}]}", 1, 21, "after element [0] of \"m\""),
        ("n_array_in_array_name", "[[1], [2 3]]", 1, 10, "after element [0] of the document[1]"),
        ("n_object_unclosed", "{\"a\": 1", 1, 8, "expected ',' or '}' after the value of \"a\", found the end of the file"),
        ("n_array_unclosed", "[1, 2", 1, 6, "expected ',' or ']' after element [1] of the document, found the end"),
        ("n_missing_colon", "{\"a\" 1}", 1, 6, "expected ':' after the key \"a\", found '1'"),
        ("n_missing_value", "{\"a\": }", 1, 7, "expected the value of \"a\", found '}'"),
        ("n_double_comma", "[1,,2]", 1, 4, "expected a value after ',', found ','"),
        ("n_leading_comma", "[,1]", 1, 2, "expected a value or ']', found ','"),
        ("n_unquoted_key", "{a: 1}", 1, 2, "expected a key in double quotes, found 'a'"),
        ("n_single_quoted_key", "{'a': 1}", 1, 2, "found \"'\" (JSON strings take double quotes)"),
        ("n_single_quoted_value", "['a']", 1, 2, "expected a value or ']', found \"'\" (JSON strings take double"),
        ("n_line_comment", "{\"a\": 1 // one\n}", 1, 9, "found '/' (JSON has no comments)"),
        ("n_block_comment", "/* x */ {}", 1, 1, "expected a JSON value, found '/' (JSON has no comments)"),
        ("n_nan", "[NaN]", 1, 2, "found 'NaN' (JSON has no NaN or Infinity)"),
        ("n_infinity", "[1, Infinity]", 1, 5, "found 'Infinity' (JSON has no NaN or Infinity)"),
        ("n_minus_infinity", "[-Infinity]", 1, 3, "expected a digit after '-', found 'Infinity'"),
        ("n_capital_true", "[True]", 1, 2, "found 'True' (JSON writes true, false and null)"),
        ("n_misspelt_literal", "[tru]", 1, 2, "expected a value or ']', found 'tru'"),
        ("n_leading_zero", "{\"port\": 08080}", 1, 10, "expected a number without leading zeros, found '08080'"),
        ("n_negative_leading_zero", "[-012]", 1, 3, "found '012'"),
        ("n_plus_sign", "[+1]", 1, 2, "expected a value or ']', found '+'"),
        ("n_leading_point", "[.5]", 1, 2, "found '.'"),
        ("n_trailing_point", "[1.]", 1, 4, "expected a digit after the decimal point, found ']'"),
        ("n_empty_exponent", "[1e]", 1, 4, "expected a digit after the exponent's 'e', found ']'"),
        ("n_hex_number", "[0x1F]", 1, 3, "expected ',' or ']' after element [0] of the document, found 'x'"),
        ("n_newline_in_string", "[\"a\nb\"]", 1, 4, "expected an escape such as \\n or \\t, found the control character U+000A"),
        ("n_tab_in_string", "[\"a\tb\"]", 1, 4, "found the control character U+0009"),
        ("n_bad_escape", #"["\x41"]"#, 1, 4, "expected an escape"),
        ("n_short_unicode_escape", #"["\u12"]"#, 1, 7, "expected 4 hex digits after \\u, found '\"'"),
        ("n_lone_high_surrogate", #"["\uD800x"]"#, 1, 9, "expected \\u and a low surrogate"),
        ("n_lone_low_surrogate", #"["\uDC00"]"#, 1, 3, "found a lone low surrogate"),
        ("n_unterminated_string", "{\"a\": \"b}", 1, 10, "expected '\"' to close the string at line 1, column 7"),
        ("n_duplicate_key", "{\n  \"clients\": 1,\n  \"clients\": 2\n}", 3, 3,
            "the key \"clients\" appears twice in the document, first at line 2, column 3"),
        ("n_duplicate_key_escaped", #"{"a": 1, "\u0061": 2}"#, 1, 10, "the key \"a\" appears twice"),
        ("n_duplicate_key_nested", "{\"load\": {\"rate\": 1, \"rate\": 2}}", 1, 22, "appears twice in \"load\""),
        ("n_two_values", "{} {}", 1, 4, "expected the end of the file after the document's value"),
        ("n_extra_close", "[1]]", 1, 4, "expected the end of the file"),
        ("n_bom", "\u{FEFF}{}", 1, 1, "byte-order mark"),
        ("n_column_counts_characters", "[\"µµ\" 1]", 1, 7, "expected ',' or ']'"),
    ]

    @Test("JSON that RFC 8259 allows is accepted", arguments: Self.accepted.map(\.name))
    func accepts(name: String) {
        let text = Self.accepted.first { $0.name == name }!.text
        #expect(StrictJSON.check(text) == nil, "\(name): \(text)")
    }

    @Test("What RFC 8259 does not allow is refused, naming line, column and what was expected",
          arguments: Self.refused.map(\.name))
    func refuses(name: String) throws {
        let (_, text, line, column, expected) = Self.refused.first { $0.name == name }!
        let error = try #require(StrictJSON.check(text), "\(name) was accepted: \(text)")
        #expect((error.line, error.column) == (line, column), "\(name): \(error)")
        #expect(error.message.contains(expected), "\(name): \(error)")
        #expect(error.message.hasPrefix("expected ") || error.message.contains("appears twice"), "\(name): \(error)")
    }

    @Test("Nesting takes no stack: 200,000 levels are read in one pass, and an unclosed one is named")
    func deepNesting() throws {
        let depth = 200_000
        #expect(StrictJSON.check(String(repeating: "[", count: depth) + String(repeating: "]", count: depth)) == nil)
        let unclosed = try #require(StrictJSON.check(String(repeating: "[{\"a\":", count: depth)))
        #expect(unclosed.column == depth * 6 + 1 && unclosed.message.hasPrefix("expected the value of \"a\""))
        let deepArrays = try #require(StrictJSON.check(String(repeating: "[", count: depth) + "1 2"))
        #expect(deepArrays.message == "expected ',' or ']' after element [0] of an array nested deep in arrays, found '2'")
    }

    @Test("Bytes that are not UTF-8 are refused where they are")
    func notUTF8() throws {
        let error = try #require(StrictJSON.check(Data([0x5B, 0x22, 0x61, 0xFF, 0x22, 0x5D])))
        #expect((error.line, error.column) == (1, 4))
        #expect(error.description == "line 1, column 4: expected UTF-8 text, found the byte 0xff")
    }

    @Test("Every accepted text is one Foundation parses too (the decoder that runs after the check)")
    func agreesWithFoundation() throws {
        for (name, text) in Self.accepted {
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
            #expect(object is NSObject, "\(name)")
        }
    }
}
