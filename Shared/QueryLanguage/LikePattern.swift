/// A `LIKE` pattern as PostgreSQL reads it: `%` any run of characters, `_` one, `\` escapes the
/// next (a `\` ending the pattern stands for nothing). Characters are Unicode scalars, as the
/// database's are.
///
/// Matching is greedy, so it costs at most the text's length times the longest run of the
/// pattern between two `%`s: the pattern splits at its `%`s into segments of fixed length; the
/// first is anchored at the text's start, the last at its end, and each one between takes its
/// first occurrence after the one before (a later occurrence would only leave less room for the
/// rest).
package struct LikePattern: Sendable {
    /// One character of a segment: a literal, or `_` (any one character).
    private enum Item: Sendable, Equatable {
        case literal(Unicode.Scalar), one
    }

    /// The pattern split at its `%`s (`a%b_%%c` → `a`, `b_`, an empty one, `c`): one segment
    /// when it has none.
    private let segments: [[Item]]
    private let caseInsensitive: Bool

    /// Reads `pattern`; `caseInsensitive` matches as `ILIKE` does, lowering every character of
    /// the pattern and the text on its own first.
    package init(_ pattern: String, caseInsensitive: Bool = false) {
        self.caseInsensitive = caseInsensitive
        var segments: [[Item]] = []
        var segment: [Item] = []
        var escaped = false
        for scalar in pattern.unicodeScalars {
            if escaped {
                segment.append(.literal(caseInsensitive ? Self.lowered(scalar) : scalar))
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == "%" {
                segments.append(segment)
                segment = []
            } else if scalar == "_" {
                segment.append(.one)
            } else {
                segment.append(.literal(caseInsensitive ? Self.lowered(scalar) : scalar))
            }
        }
        segments.append(segment)
        self.segments = segments
    }

    /// How many `%` wildcards the pattern holds (escaped ones are literals).
    package var wildcards: Int { segments.count - 1 }

    /// Refuses (``QueryLanguageError/Kind/tooComplex``) a pattern longer than
    /// `limits.maximumPatternLength` characters or with more than `limits.maximumPatternWildcards`
    /// `%`s: one rule for every parsed clause, whether the database or memory matches it.
    package static func requireWithin(_ limits: QueryLimits, _ pattern: String) throws(QueryLanguageError) {
        guard pattern.unicodeScalars.count <= limits.maximumPatternLength else {
            throw QueryLanguageError(
                .tooComplex, "A LIKE pattern is longer than \(limits.maximumPatternLength) characters")
        }
        guard LikePattern(pattern).wildcards <= limits.maximumPatternWildcards else {
            throw QueryLanguageError(
                .tooComplex, "A LIKE pattern has more than \(limits.maximumPatternWildcards) '%' wildcards")
        }
    }

    /// Whether all of `text` matches, however long deciding takes.
    package func matches(_ text: String) -> Bool {
        var unlimited = MatchBudget(steps: .max)
        return matches(text, budget: &unlimited) ?? false
    }

    /// Whether all of `text` matches, paying `budget` a step per character of the text read and
    /// per character compared; nil once the budget has run out.
    package func matches(_ text: String, budget: inout MatchBudget) -> Bool? {
        // Every UTF-8 byte is at most one character: the reading is paid for before it is done.
        guard budget.spend(text.utf8.count) else { return nil }
        let scalars = caseInsensitive ? text.unicodeScalars.map(Self.lowered) : Array(text.unicodeScalars)
        let matched = match(scalars, &budget)
        return budget.isExhausted ? nil : matched
    }

    private func match(_ text: [Unicode.Scalar], _ budget: inout MatchBudget) -> Bool {
        let first = segments[0]
        guard segments.count > 1 else {
            guard first.count == text.count else { return false }
            return Self.matches(first, text, at: 0, &budget)
        }
        let last = segments[segments.count - 1]
        guard first.count + last.count <= text.count, Self.matches(first, text, at: 0, &budget) else { return false }
        let tail = text.count - last.count
        var position = first.count
        for segment in segments[1..<(segments.count - 1)] where !segment.isEmpty {
            guard let start = Self.firstOccurrence(of: segment, in: text, from: position, endingBy: tail, &budget)
            else {
                return false
            }
            position = start + segment.count
        }
        return Self.matches(last, text, at: tail, &budget)
    }

    /// The first place at or after `start` where `segment` matches and ends by `end`; nil when
    /// there is none or the budget runs out first.
    private static func firstOccurrence(
        of segment: [Item], in text: [Unicode.Scalar], from start: Int, endingBy end: Int, _ budget: inout MatchBudget
    ) -> Int? {
        guard start + segment.count <= end else { return nil }
        for candidate in start...(end - segment.count) {
            if Self.matches(segment, text, at: candidate, &budget) { return candidate }
            if budget.isExhausted { return nil }
        }
        return nil
    }

    /// Whether `segment` matches `text` from `start` (which leaves room for it), paying a step per
    /// character compared (one at least).
    private static func matches(_ segment: [Item], _ text: [Unicode.Scalar], at start: Int, _ budget: inout MatchBudget)
        -> Bool
    {
        var offset = 0
        while offset < segment.count {
            if case .literal(let scalar) = segment[offset], text[start + offset] != scalar { break }
            offset += 1
        }
        _ = budget.spend(offset + 1)
        return offset == segment.count
    }

    /// `scalar` lowered on its own, as PostgreSQL's `lower()` lowers under a UTF-8 ctype; one whose
    /// lowercase is several characters stays as it is.
    private static func lowered(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if scalar.isASCII { return ("A"..."Z").contains(scalar) ? Unicode.Scalar(UInt8(scalar.value) + 32) : scalar }
        let lowercase = scalar.properties.lowercaseMapping.unicodeScalars
        guard lowercase.count == 1, let lowered = lowercase.first else { return scalar }
        return lowered
    }
}

/// A bound on the work of one evaluation of a where clause in memory (a real-time subscription's
/// clause on a changed object, a selector on a message's headers), in steps: characters read or
/// compared. An evaluation over an object is granted a fixed allowance plus a multiple of the
/// text the object holds, so deciding costs at most a constant times what the object cost to
/// read; one that runs out stops, and the object does not match.
package struct MatchBudget: Sendable {
    /// Steps every evaluation is granted, whatever the object's size.
    package static let baseSteps = 100_000
    /// Steps granted per UTF-8 byte of the object's text.
    package static let stepsPerByte = 16

    /// The steps granted.
    package let limit: Int
    /// The steps asked for so far (beyond `limit` once the budget has run out).
    package private(set) var spent = 0

    /// A budget of `steps`.
    package init(steps: Int) {
        limit = max(0, steps)
    }

    /// The budget of one evaluation over an object holding `bytes` UTF-8 bytes of text:
    /// ``baseSteps`` plus ``stepsPerByte`` per byte.
    package init(textBytes bytes: Int) {
        let (scaled, overflow) = max(0, bytes).multipliedReportingOverflow(by: Self.stepsPerByte)
        let (steps, overflowAgain) = scaled.addingReportingOverflow(Self.baseSteps)
        self.init(steps: overflow || overflowAgain ? .max : steps)
    }

    /// Whether more steps were asked for than granted.
    package var isExhausted: Bool { spent > limit }

    /// Asks for `steps` more; false once the budget has run out.
    package mutating func spend(_ steps: Int) -> Bool {
        let (total, overflow) = spent.addingReportingOverflow(max(0, steps))
        spent = overflow ? .max : total
        return spent <= limit
    }
}

/// Deciding many clauses over one object — every subscription's where clause on one change
/// event, every selector on one message — within work bounded by the object, not by how many
/// clauses there are, and shared fairly. Each evaluation first has ``ownSteps``, which decide
/// clauses on ordinary objects; those that run out are evaluated again with a share of what
/// ``MatchBudget/init(textBytes:)`` grants for the object: equal shares per group (a real-time
/// connection), split equally among the group's clauses. The work is at most twice the own
/// steps per clause plus the object's grant, a connection's many clauses take no more than one
/// clause of another connection, and no verdict depends on the order the clauses are taken in.
/// (Before, each of a hundred costly clauses earned the whole grant, so one large write stalled
/// every subscriber of the process: the second probe's F3.)
package enum FairMatching {
    /// What an evaluation decided.
    package enum Verdict: Sendable, Equatable {
        case match, noMatch
        /// Deciding would take more than the evaluation's share: the object does not match.
        case undecided
    }

    /// Steps each evaluation has before any share of the object's grant.
    package static let ownSteps = 4_000

    /// The verdicts of evaluations over an object holding `textBytes` UTF-8 bytes of text, one
    /// per element of `groups` (which group each belongs to); `evaluate(i, &budget)` decides the
    /// `i`th within `budget` (false once it has run out).
    package static func decide<Group: Hashable>(
        groups: [Group], textBytes: Int, _ evaluate: (Int, inout MatchBudget) -> Bool
    ) -> [Verdict] {
        var verdicts = [Verdict](repeating: .noMatch, count: groups.count)
        var needing: [Group: [Int]] = [:]
        for index in groups.indices {
            var budget = MatchBudget(steps: ownSteps)
            let matched = evaluate(index, &budget)
            if budget.isExhausted {
                needing[groups[index], default: []].append(index)
            } else {
                verdicts[index] = matched ? .match : .noMatch
            }
        }
        let grant = MatchBudget(textBytes: textBytes).limit
        for indices in needing.values {
            let share = grant / needing.count / indices.count
            let (steps, overflow) = share.addingReportingOverflow(ownSteps)
            for index in indices {
                var budget = MatchBudget(steps: overflow ? .max : steps)
                let matched = evaluate(index, &budget)
                verdicts[index] = budget.isExhausted ? .undecided : matched ? .match : .noMatch
            }
        }
        return verdicts
    }
}
