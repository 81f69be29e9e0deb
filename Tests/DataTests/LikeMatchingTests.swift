import DataEngine
import InternalProtocol
import QueryLanguage
import TestSupport
import Testing

/// LIKE matched in memory (real-time where clauses, message selectors): the greedy matcher
/// answers as a textbook matcher does (and so as PostgreSQL, which the property tests compare
/// the in-memory answers with), a literal pattern beyond the where language's limits is refused
/// when the clause is parsed, and an evaluation's work is bounded by a budget linear in the
/// object's text, counted in steps rather than timed.
@Suite(.timeLimit(.minutes(20)), .tags(.fast)) struct LikeMatchingTests {
    @Test func greedyMatchingAgreesWithTheReferenceOnEveryShortPatternAndText() {
        let patterns = Self.strings(over: ["a", "b", "%", "_", "\\"], upTo: 4)
        let texts = Self.strings(over: ["a", "b", "%", "_"], upTo: 4)
        var disagreements: [String] = []
        for pattern in patterns {
            let like = LikePattern(pattern)
            for text in texts where like.matches(text) != Self.reference(pattern, text) {
                disagreements.append("'\(text)' LIKE '\(pattern)'")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) differ: \(disagreements.prefix(20))")
    }

    @Test func greedyMatchingAgreesWithTheReferenceOnSeededRandomPatternsWithAndWithoutCase() {
        let seed = SeededGenerator.seed("LIKE_TEST_SEED")
        var random = SeededGenerator(seed: seed)
        // Precomposed letters in both cases, a lone combining mark (one character of its own)
        // and the pattern's special characters, in texts too.
        let alphabet = ["a", "A", "b", "\u{E9}", "\u{C9}", "\u{301}", "%", "_", "\\"]
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            let pattern = Self.randomString(over: alphabet, upTo: 8, &random)
            let text = Self.randomString(over: alphabet, upTo: 12, &random)
            let caseInsensitive = Bool.random(using: &random)
            let expected = Self.reference(pattern, text, caseInsensitive: caseInsensitive)
            if LikePattern(pattern, caseInsensitive: caseInsensitive).matches(text) != expected {
                disagreements.append("'\(text)' \(caseInsensitive ? "ILIKE" : "LIKE") '\(pattern)'")
            }
        }
        #expect(disagreements.isEmpty, "seed \(seed): \(disagreements.count) differ: \(disagreements.prefix(20))")
    }

    @Test func escapesUnderscoresAndCaseFollowPostgreSQL() {
        // (pattern, text, LIKE, ILIKE)
        let cases: [(String, String, Bool, Bool)] = [
            ("a\\%c", "a%c", true, true), ("a\\%c", "abc", false, false),
            ("a\\_c", "a_c", true, true), ("a\\_c", "abc", false, false),
            ("100\\%", "100%", true, true), ("\\\\", "\\", true, true), ("\\a", "a", true, true),
            // A backslash ending the pattern escapes nothing (the rule the matcher has always had).
            ("a\\", "a", true, true),
            ("a_c", "abc", true, true), ("a_c", "ac", false, false),
            // One character is one Unicode scalar, as in the database.
            ("_", "\u{E9}", true, true), ("_", "e\u{301}", false, false), ("__", "e\u{301}", true, true),
            ("%", "", true, true), ("%", "x\ny", true, true), ("%%%", "x", true, true),
            ("", "", true, true), ("", "a", false, false),
            // The anchored first and last segments may not overlap, nor the ones between.
            ("a%a", "a", false, false), ("a%a", "aa", true, true),
            ("%a%a%", "aba", true, true), ("%a%a%", "ba", false, false),
            ("%ab%ab", "abab", true, true), ("%ab%ab", "aab", false, false),
            ("%b_", "abc", true, true), ("%a_b%", "xaxb", true, true), ("a%b%c", "abbc", true, true),
            ("ABC", "abc", false, true), ("a%C", "AbC", false, true), ("\\A", "a", false, true),
            ("\u{C9}t\u{E9}", "\u{E9}T\u{C9}", false, true),
        ]
        for (pattern, text, like, ilike) in cases {
            #expect(LikePattern(pattern).matches(text) == like, "'\(text)' LIKE '\(pattern)'")
            #expect(LikePattern(pattern, caseInsensitive: true).matches(text) == ilike, "'\(text)' ILIKE '\(pattern)'")
            #expect(Self.reference(pattern, text) == like, "the reference: '\(text)' LIKE '\(pattern)'")
        }
    }

    @Test func patternsBeyondTheLimitsAreRefusedWhenTheClauseIsParsed() throws {
        let hundred = "t LIKE '" + String(repeating: "%a", count: 100) + "'"
        #expect(throws: QueryLanguageError(.tooComplex, "A LIKE pattern has more than 32 '%' wildcards")) {
            try QueryParser.condition(hundred)
        }
        #expect(throws: QueryLanguageError(.tooComplex, "A LIKE pattern has more than 32 '%' wildcards")) {
            try QueryParser.condition("name = 'x' OR t NOT LIKE '" + String(repeating: "%", count: 33) + "'")
        }
        #expect(throws: QueryLanguageError(.tooComplex, "A LIKE pattern is longer than 1024 characters")) {
            try QueryParser.condition("t LIKE '" + String(repeating: "a", count: 1_025) + "'")
        }
        // Data's where clauses (finds and real-time subscriptions alike) answer it with 1018.
        let error = #expect(throws: ErrorEnvelope.self) {
            _ = try DataError.parsing { () throws(QueryLanguageError) in try QueryParser.condition(hundred) }
        }
        #expect(error?.code == 1018 && error?.status == 400, "\(String(describing: error))")
        // At the limits, and with escaped %s (literals), a pattern is accepted.
        _ = try QueryParser.condition("t LIKE '" + String(repeating: "%a", count: 32) + "'")
        _ = try QueryParser.condition("t LIKE '" + Self.costliest + "'")
        _ = try QueryParser.condition("t LIKE '" + String(repeating: "\\%", count: 100) + "'")
        #expect(LikePattern(String(repeating: "\\%", count: 100)).wildcards == 0)
        #expect(LikePattern(Self.costliest).wildcards == 32)
    }

    @Test func aPatternAtTheLimitsCostsLinearWorkOnAnEightyKilobyteText() {
        let widest = LikePattern(String(repeating: "%a", count: 32))
        for (text, expected) in [
            (String(repeating: "ab", count: 40_000) + "a", true), (String(repeating: "b", count: 80_000), false),
        ] {
            var budget = MatchBudget(textBytes: text.utf8.count)
            let matched = widest.matches(text, budget: &budget)
            #expect(matched == expected)
            #expect(!budget.isExhausted && budget.spent <= 3 * text.utf8.count, "\(budget.spent) steps")
        }
        // The costliest allowed pattern: each of 32 segments is 31 characters long, so the greedy
        // search costs the text's length times 31 with no budget, and stops at its budget with one.
        let costliest = LikePattern(Self.costliest)
        let letters = String(repeating: "a", count: 80_000)
        var unlimited = MatchBudget(steps: .max)
        let decided = costliest.matches(letters, budget: &unlimited)
        #expect(decided == false)
        #expect(unlimited.spent <= 33 * letters.utf8.count, "\(unlimited.spent) steps")
        var bounded = MatchBudget(textBytes: letters.utf8.count)
        #expect(unlimited.spent > bounded.limit)
        let undecided = costliest.matches(letters, budget: &bounded)
        #expect(undecided == nil, "undecided once the budget has run out")
        #expect(
            bounded.isExhausted && bounded.spent <= bounded.limit + 31, "\(bounded.spent) of \(bounded.limit) steps")
    }

    /// A hundred of the costliest clauses of one connection and a wide one of another over the
    /// same 80 KB text: together they do at most twice their own steps each plus what the text
    /// earns once (each costly one alone could spend that much), the other connection's clause
    /// is decided within its share, and no verdict depends on the order the clauses are taken in.
    @Test func clausesOverOneObjectShareItsBudgetFairly() {
        let text = String(repeating: "a", count: 80_000)
        let patterns =
            Array(repeating: LikePattern(Self.costliest), count: 100) + [
                LikePattern(String(repeating: "%a", count: 32))
            ]
        let connections = Array(repeating: "attacker", count: 100) + ["other"]
        var spent = 0
        let verdicts = FairMatching.decide(groups: connections, textBytes: text.utf8.count) { index, budget in
            defer { spent += min(budget.spent, budget.limit + 31) }
            return patterns[index].matches(text, budget: &budget) ?? false
        }
        let grant = MatchBudget(textBytes: text.utf8.count).limit
        #expect(spent <= grant + 2 * patterns.count * (FairMatching.ownSteps + 31), "\(spent) steps")
        #expect(verdicts.last == .match, "the other connection's pattern is decided within its share")
        #expect(verdicts.dropLast().allSatisfy { $0 == .undecided })
        let reversed = FairMatching.decide(groups: Array(connections.reversed()), textBytes: text.utf8.count) {
            index, budget in
            patterns[patterns.count - 1 - index].matches(text, budget: &budget) ?? false
        }
        #expect(Array(reversed.reversed()) == verdicts)
        // One clause alone has the whole grant, as it always had.
        let alone = FairMatching.decide(groups: [0], textBytes: text.utf8.count) { _, budget in
            LikePattern("%" + String(repeating: "a", count: 30) + "%").matches(text, budget: &budget) ?? false
        }
        #expect(alone == [.match])
    }

    @Test func aClauseThatRunsOutOfItsBudgetDoesNotMatch() throws {
        let table = TableSchema(
            name: "Big",
            columns: ColumnSchema.system + [ColumnSchema(name: "t", type: .text), ColumnSchema(name: "p", type: .text)])
        func predicate(_ clause: String) throws -> ObjectPredicate {
            try ObjectPredicate(try QueryParser.condition(clause), table: table)
        }
        let eighty = JSONObject([("objectId", .string("x")), ("t", .string(String(repeating: "a", count: 80_000)))])
        // A pattern from a column escapes the parse-time limits: a 40,000-character segment
        // whose only occurrence ends the text would take 40,000 × 40,000 comparisons.
        let patterned = JSONObject([
            ("objectId", .string("y")), ("t", .string(String(repeating: "a", count: 80_000) + "b")),
            ("p", .string("%" + String(repeating: "a", count: 40_000) + "b%")),
        ])
        let overBudget: [(String, JSONObject, Int)] = [
            ("t LIKE '\(Self.costliest)'", eighty, 31),
            // Negated, a clause that ran out still does not match (it would if it were decided).
            ("t NOT LIKE '\(Self.costliest)'", eighty, 31),
            ("t LIKE p", patterned, 40_001),
            // Once the budget has run out nothing else is decided: not even the true comparison.
            ("NOT (t LIKE p) OR objectId = 'y'", patterned, 40_002),
        ]
        for (clause, object, overshoot) in overBudget {
            let compiled = try predicate(clause)
            var budget = MatchBudget(evaluating: object)
            let matched = compiled.matches(object, budget: &budget)
            #expect(!matched, "\(clause)")
            #expect(
                budget.isExhausted && budget.spent <= budget.limit + overshoot,
                "\(clause): \(budget.spent) of \(budget.limit) steps")
            #expect(!compiled.matches(object), "\(clause)")
        }
        // Within the budget, the answer is the database's.
        let widest = try predicate("t LIKE '\(String(repeating: "%a", count: 32))'")
        var ample = MatchBudget(evaluating: eighty)
        let decided = widest.matches(eighty, budget: &ample)
        #expect(decided)
        #expect(!ample.isExhausted && ample.spent < 2 * 80_000, "\(ample.spent) steps")
        #expect(try predicate("t NOT LIKE '%b%' AND t LIKE 'a%a'").matches(eighty))
    }

    /// The costliest pattern the limits allow: 32 `%`s, 1,024 characters, every segment 31 long.
    static let costliest = String(repeating: "%" + String(repeating: "a", count: 30) + "b", count: 32)

    /// Every string of up to `length` items of `alphabet`.
    static func strings(over alphabet: [String], upTo length: Int) -> [String] {
        var all = [""]
        var longest = [""]
        for _ in 0..<length {
            longest = longest.flatMap { prefix in alphabet.map { prefix + $0 } }
            all += longest
        }
        return all
    }

    static func randomString(over alphabet: [String], upTo length: Int, _ random: inout SeededGenerator) -> String {
        (0..<Int.random(in: 0...length, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
    }

    /// The textbook matcher: after each token of the pattern, which prefixes of the text it
    /// matches. `caseInsensitive` lowers every character on its own first.
    static func reference(_ pattern: String, _ text: String, caseInsensitive: Bool = false) -> Bool {
        enum Token { case any, one, literal(Unicode.Scalar) }
        func fold(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
            guard caseInsensitive else { return scalar }
            let lowered = String(Character(scalar)).lowercased().unicodeScalars
            return lowered.count == 1 ? lowered.first! : scalar
        }
        var tokens: [Token] = []
        var escaped = false
        for scalar in pattern.unicodeScalars {
            if escaped {
                tokens.append(.literal(fold(scalar)))
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else {
                tokens.append(scalar == "%" ? .any : scalar == "_" ? .one : .literal(fold(scalar)))
            }
        }
        let characters = text.unicodeScalars.map(fold)
        var matched = [true] + Array(repeating: false, count: characters.count)
        for token in tokens {
            var next = Array(repeating: false, count: characters.count + 1)
            for end in 0...characters.count {
                switch token {
                case .any: next[end] = matched[end] || (end > 0 && next[end - 1])
                case .one: next[end] = end > 0 && matched[end - 1]
                case .literal(let scalar): next[end] = end > 0 && matched[end - 1] && characters[end - 1] == scalar
                }
            }
            matched = next
        }
        return matched[characters.count]
    }
}
