import Foundation
import Synchronization

/// Date strings accepted in where clauses: `created > '03/23/2015'` compares a DATETIME column
/// with the instant the quoted string names.
///
/// The accepted forms are the Java `SimpleDateFormat` patterns of the Backendless dialect, tried in
/// order; the first pattern that matches the whole string wins. Matching is strict: every literal
/// character must appear exactly as written (no extra spaces, no `/` where the pattern has `-`),
/// and out-of-range values such as month 13 or February 30 fail instead of rolling over. Strings
/// without a time zone are read in UTC. A weekday name must be a real one but is not checked
/// against the date, as in lenient Java.
package enum DateLiteral {
    /// The date a where-clause string names, or nil when no supported format matches.
    package static func parse(_ text: String) -> Date? {
        readers.lazy.compactMap { $0.date(from: text) }.first
    }

    /// The supported patterns, in the order tried (documentation and tests use this).
    package static let patterns: [String] = [
        "EEE MMM dd HH:mm:ss zzz yyyy",
        "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'",
        "MM/dd/yyyy HH:mm:ss 'GMT'z",
        "MM.dd.yyyy HH:mm:ss 'GMT'z",
        "MM-dd-yyyy HH:mm:ss 'GMT'z",
        "MM/dd/yyyy HH:mm:ss z",
        "MM.dd.yyyy HH:mm:ss z",
        "MM.dd.yyyy HH:mm:ss",
        "MM-dd-yyyy HH:mm:ss",
        "MM/dd/yyyy HH:mm:ss",
        "MM.dd.yyyy",
        "MM-dd-yyyy",
        "MM/dd/yyyy HH:mm:ss 'GMT'Z",
        "MM/dd/yyyy HH:mm",
        "MM/dd/yyyy",
        "dd/MMM/yyyy",
        "dd-MMM-yyyy",
        "EEEEE, d MMMMM yyyy",
        "yyyy/MM/d/HH:mm:ss",
        "yyyy-MM-dd'T'HH:mm:ss",
        "EEEEE, MMMMM d, yyyy",
        "MMMMM d, yyyy",
        "yyyy M d",
        "yyyyMMMd",
        "yyyy-MMM-d",
        "yyyy-M-d, E",
        "'Date' yyyy-MM-dd",
        "yyyy-MM-dd'T'HH:mm:ssZ",
        "yyyy-MM-dd'T'HH:mmZ",
        "yyyy-MM-dd",
        "yyyy-'W'w",
        "yyyy-DDD",
        "d MMMMM yyyy, HH'h' mm'm' ss's'",
        // Not in the product's list, but its own examples use them ('28-10-1988', '20170101').
        "dd-MM-yyyy",
        "yyyyMMdd",
    ]

    private static let readers: [PatternReader] = patterns.map(PatternReader.init(javaPattern:))
}

// MARK: - Reading one pattern

extension DateLiteral {
    /// Reads strings of one Java pattern: a cheap outline check first, then ICU (or the ISO week
    /// rule) for the field values.
    private final class PatternReader: Sendable {
        /// How the field values are turned into a date once the outline matches.
        private enum Reading {
            case icu(pattern: String)
            case isoWeek
        }

        private let outline: Outline
        private let reading: Reading
        // DateFormatter is neither Sendable nor safe to parse with from two threads at once, so
        // each pattern keeps one formatter behind its own lock, built on first use.
        private let formatter = Mutex<DateFormatter?>(nil)

        init(javaPattern: String) {
            let tokens = PatternToken.tokens(of: javaPattern)
            outline = Outline(tokens)
            let namesAWeek = tokens.contains { $0.fieldLetter == "w" }
            reading = namesAWeek ? .isoWeek : .icu(pattern: PatternToken.icuPattern(of: tokens))
        }

        func date(from text: String) -> Date? {
            guard let fields = outline.fields(in: text) else { return nil }
            switch reading {
            case .isoWeek:
                return DateLiteral.isoWeekDate(fields)
            case .icu(let icuPattern):
                return formatter.withLock { cached in
                    let formatter = cached ?? DateLiteral.strictFormatter(icuPattern)
                    cached = formatter
                    return formatter.date(from: text)
                }
            }
        }
    }

    private static func strictFormatter(_ icuPattern: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = utcGregorian
        formatter.timeZone = utcGregorian.timeZone
        // Non-lenient ICU rejects out-of-range fields (month 13, February 30) instead of rolling
        // them over. It still treats `-`, `/`, `.` and spaces as interchangeable and skips stray
        // whitespace, which is why `Outline` checks the literal characters first.
        formatter.isLenient = false
        formatter.dateFormat = icuPattern
        return formatter
    }

    private static let utcGregorian: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.locale = Locale(identifier: "en_US_POSIX")
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()
}

// MARK: - ISO week dates

extension DateLiteral {
    // `yyyy-'W'w` ("2015-W13") names the Monday, 00:00 UTC, of that ISO 8601 week: weeks start on
    // Monday, week 1 is the week holding January 4th, and the year is the ISO week-numbering year
    // (so "2015-W01" is 2014-12-29). Java would follow the locale's week rules (Sunday-first in the
    // US) and ICU's DateFormatter ignores the calendar's week settings, so the rule is computed
    // here. Weeks beyond the year's last week (53 only in long years) fail.
    private static func isoWeekDate(_ fields: [Character: Substring]) -> Date? {
        guard let yearText = fields["y"], let weekText = fields["w"],
            let year = Int(yearText), let week = Int(weekText),
            (1...9999).contains(year),
            let firstMonday = mondayOfFirstISOWeek(of: year),
            let nextFirstMonday = mondayOfFirstISOWeek(of: year + 1)
        else { return nil }
        guard
            let weeksInYear = Int(exactly: (nextFirstMonday.timeIntervalSince(firstMonday) / secondsPerWeek).rounded()),
            (1...max(1, weeksInYear)).contains(week)
        else { return nil }
        return firstMonday.addingTimeInterval(Double(week - 1) * secondsPerWeek)
    }

    private static func mondayOfFirstISOWeek(of year: Int) -> Date? {
        guard let january4 = utcGregorian.date(from: DateComponents(year: year, month: 1, day: 4)) else {
            return nil
        }
        // Foundation numbers weekdays 1 = Sunday … 7 = Saturday.
        let daysSinceMonday = (utcGregorian.component(.weekday, from: january4) + 5) % 7
        return january4.addingTimeInterval(-Double(daysSinceMonday) * secondsPerDay)
    }

    private static let secondsPerDay: TimeInterval = 86_400
    private static let secondsPerWeek: TimeInterval = 7 * secondsPerDay
}

// MARK: - Pattern syntax

extension DateLiteral {
    /// A piece of a Java `SimpleDateFormat` pattern.
    private enum PatternToken: Equatable {
        /// A run of one pattern letter, such as `yyyy`.
        case field(Character, count: Int)
        /// Text that must appear as written (quoted text and punctuation).
        case literal(String)

        var fieldLetter: Character? {
            if case .field(let letter, _) = self { return letter }
            return nil
        }

        static func tokens(of pattern: String) -> [PatternToken] {
            var tokens: [PatternToken] = []
            var characters = pattern[...]
            while let first = characters.first {
                if first == "'" {
                    appendLiteral(quotedText(&characters), to: &tokens)
                } else if first.isASCII, first.isLetter {
                    let run = characters.prefix { $0 == first }
                    tokens.append(.field(first, count: run.count))
                    characters = characters.dropFirst(run.count)
                } else {
                    appendLiteral(String(first), to: &tokens)
                    characters = characters.dropFirst()
                }
            }
            return tokens
        }

        /// Consumes `'text'` (where `''` stands for one apostrophe, inside quotes or not).
        private static func quotedText(_ characters: inout Substring) -> String {
            characters = characters.dropFirst()
            if characters.first == "'" {
                characters = characters.dropFirst()
                return "'"
            }
            var text = ""
            while let next = characters.popFirst() {
                guard next == "'" else {
                    text.append(next)
                    continue
                }
                guard characters.first == "'" else { break }
                text.append("'")
                characters = characters.dropFirst()
            }
            return text
        }

        private static func appendLiteral(_ text: String, to tokens: inout [PatternToken]) {
            if case .literal(let previous) = tokens.last {
                tokens[tokens.count - 1] = .literal(previous + text)
            } else {
                tokens.append(.literal(text))
            }
        }

        // Java and ICU agree on every letter these patterns use except the five-letter text
        // fields: Java parses `EEEEE`/`MMMMM` as full names ("Monday", "March"), ICU as narrow
        // ones ("M"). Four letters mean the full name in ICU. (Java's `SSS` reads "30.1" as 1 ms
        // and ICU as 100 ms; the fraction reading is what ISO strings mean, so it stays.)
        static func icuPattern(of tokens: [PatternToken]) -> String {
            tokens.map { token in
                switch token {
                case .field(let letter, let count) where "EM".contains(letter) && count > 4:
                    String(repeating: letter, count: 4)
                case .field(let letter, let count):
                    String(repeating: letter, count: count)
                case .literal(let text) where text.contains(where: { $0.isLetter || $0 == "'" }):
                    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
                case .literal(let text):
                    text
                }
            }.joined()
        }
    }

    /// The kind of characters a pattern field can be written with.
    private enum FieldCharacters: Equatable {
        case digits, letters, zone

        init(letter: Character, count: Int) {
            switch letter {
            case "E", "G", "a": self = .letters
            case "M", "L": self = count >= 3 ? .letters : .digits
            case "z", "Z", "X": self = .zone
            default: self = .digits
            }
        }

        func admits(_ character: Character) -> Bool {
            guard character.isASCII else { return false }
            switch self {
            case .digits: return character.isNumber
            case .letters: return character.isLetter
            case .zone: return character.isLetter || character.isNumber || "+-:".contains(character)
            }
        }
    }

    /// A pattern's outline: its literal characters exactly, and each field as a run of the
    /// characters it can be written with. Matching it before ICU makes literals strict and lets
    /// most patterns reject a string without taking a formatter's lock.
    private struct Outline {
        private enum Part {
            case literal(Character)
            /// Abutting fields of the same kind (`yyyyMMdd`) form one run, named by its first letter.
            case run(FieldCharacters, letter: Character, fields: Int)
        }

        /// The most digits one field may have: ICU reads each into a 32-bit integer, and a longer
        /// fraction of a second makes it divide by zero (SIGFPE, the process dies) from 35 digits.
        static let maximumFieldDigits = 9

        private let parts: [Part]

        init(_ tokens: [PatternToken]) {
            var parts: [Part] = []
            for token in tokens {
                switch token {
                case .literal(let text):
                    parts += text.map(Part.literal)
                case .field(let letter, let count):
                    let characters = FieldCharacters(letter: letter, count: count)
                    if case .run(characters, let first, let fieldCount) = parts.last {
                        parts[parts.count - 1] = .run(characters, letter: first, fields: fieldCount + 1)
                        continue
                    }
                    parts.append(.run(characters, letter: letter, fields: 1))
                }
            }
            self.parts = parts
        }

        /// The text of each run keyed by its letter, or nil when `text` does not have this outline.
        func fields(in text: String) -> [Character: Substring]? {
            // Runs are taken greedily: no pattern follows a field with a literal the field's
            // characters admit, so the longest run is the only one that can match.
            var rest = text[...]
            var fields: [Character: Substring] = [:]
            for part in parts {
                switch part {
                case .literal(let expected):
                    guard rest.first == expected else { return nil }
                    rest = rest.dropFirst()
                case .run(let characters, let letter, let fieldCount):
                    let run = rest.prefix(while: characters.admits)
                    guard !run.isEmpty, characters != .digits || run.count <= fieldCount * Self.maximumFieldDigits
                    else {
                        return nil
                    }
                    fields[letter] = run
                    rest = rest.dropFirst(run.count)
                }
            }
            return rest.isEmpty ? fields : nil
        }
    }
}
