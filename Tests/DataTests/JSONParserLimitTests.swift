import DataEngine
import TestSupport
import Testing

/// The shared parser's limits: keys in one object and nesting depth are refused with its usual
/// error, duplicates are found among as many keys as the limit allows, and bodies as large as
/// legitimate requests (a bulk create of 100 full rows, a unit of work of 1,000 operations) parse.
@Suite(.timeLimit(.minutes(20)), .tags(.fast)) struct JSONParserLimitTests {
    /// `{"k0": 0, "k1": 1, …}` with `count` keys.
    static func object(keys count: Int) -> String {
        "{" + (0..<count).map { #""k\#($0)": \#($0)"# }.joined(separator: ",") + "}"
    }

    /// The parser's message for `text`, or nil when it parses.
    static func refusal(
        _ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth,
        maximumKeys: Int = JSONParser.defaultMaximumKeys
    ) -> String? {
        do {
            _ = try JSONParser.parse(text, maximumDepth: maximumDepth, maximumKeys: maximumKeys)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func objectsOfMoreKeysThanTheLimitAreRefused() {
        let limit = JSONParser.defaultMaximumKeys
        #expect(limit == 10_000)
        #expect(Self.refusal(Self.object(keys: limit)) == nil)
        for text in [
            Self.object(keys: limit + 1), Self.object(keys: 200_000), #"{"a": [\#(Self.object(keys: limit + 1))]}"#,
        ] {
            let refused = Self.refusal(text)
            #expect(refused?.contains("more than \(limit) keys") == true, "\(refused ?? "parsed")")
        }
        #expect(Self.refusal(Self.object(keys: 2), maximumKeys: 2) == nil)
        #expect(Self.refusal(Self.object(keys: 3), maximumKeys: 2)?.contains("more than 2 keys") == true)
    }

    @Test func nestingDeeperThanTheLimitIsRefused() {
        let limit = JSONParser.defaultMaximumDepth
        #expect(limit == 64)
        func objects(_ levels: Int) -> String {
            String(repeating: #"{"a":"#, count: levels - 1) + "{}" + String(repeating: "}", count: levels - 1)
        }
        func arrays(_ levels: Int) -> String {
            String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
        }
        #expect(Self.refusal(objects(limit)) == nil)
        #expect(Self.refusal(arrays(limit)) == nil)
        for text in [objects(limit + 1), arrays(limit + 1), arrays(100_000)] {
            #expect(Self.refusal(text)?.contains("nested deeper than \(limit) levels") == true)
        }
    }

    @Test func duplicateKeysAreFoundAmongAsManyKeysAsTheLimitAllows() {
        let late = "{" + (0..<9_999).map { #""k\#($0)": 0"# }.joined(separator: ",") + #", "k0": 1}"#
        #expect(Self.refusal(late)?.contains("duplicate key 'k0'") == true)
        // Keys differing only in case are different JSON keys (the engine refuses them later).
        #expect(Self.refusal(#"{"name": 1, "Name": 2}"#) == nil)
    }

    @Test func theLargestLegitimateBodiesParse() throws {
        let row = Self.object(keys: 1_000)
        let bulk = "[" + Array(repeating: row, count: 100).joined(separator: ",") + "]"
        #expect(try JSONParser.parse(bulk).array?.count == 100)
        let operations = (0..<1_000).map { index in
            #"{"operationType": "CREATE", "table": "T", "opResultId": "op\#(index)", "payload": {"name": "n\#(index)", "v": \#(index)}}"#
        }
        let work =
            #"{"isolationLevelEnum": "READ_COMMITTED", "operations": ["# + operations.joined(separator: ",") + "]}"
        #expect(try JSONParser.parse(work).object?["operations"]?.array?.count == 1_000)
    }

    /// A document holds at most `maximumValues` values at any depth: an array of millions of
    /// numbers (seconds of a service's time, anonymously) is refused as it is read, while the
    /// largest legitimate bodies above stay well within (second probe, F6).
    @Test func documentsOfMoreValuesThanTheLimitAreRefused() {
        let limit = JSONParser.maximumValues
        #expect(limit == 250_000)
        let fits = "[" + Array(repeating: "1", count: limit - 1).joined(separator: ",") + "]"
        #expect(Self.refusal(fits) == nil)
        let nested = "[[" + Array(repeating: "1", count: limit - 2).joined(separator: ",") + "]]"
        #expect(Self.refusal(nested) == nil)
        for text in [
            "[" + Array(repeating: "1", count: limit).joined(separator: ",") + "]",
            "[" + Array(repeating: "1", count: 2_000_000).joined(separator: ",") + "]",
            #"{"a": [["# + Array(repeating: "null", count: limit).joined(separator: ",") + "]]}",
        ] {
            let refused = Self.refusal(text)
            #expect(refused?.contains("more than \(limit) values") == true, "\(refused ?? "parsed")")
        }
    }
}
