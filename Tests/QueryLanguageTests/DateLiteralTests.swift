import Foundation
import QueryLanguage
import Testing

/// The date strings where clauses accept. Expected instants were computed with
/// `date -u -d '<ISO instant>' +%s%3N`, independently of the code under test.
@Suite(.tags(.fast)) struct DateLiteralTests {
    /// One string per supported pattern, in `DateLiteral.patterns` order, then a few extra forms.
    static let accepted: [(String, Int64)] = [
        ("Mon Mar 23 10:20:30 PST 2015", 1_427_134_830_000),  // EEE MMM dd HH:mm:ss zzz yyyy
        ("2015-03-23T10:20:30.123Z", 1_427_106_030_123),  // yyyy-MM-dd'T'HH:mm:ss.SSS'Z'
        ("10/28/1988 00:00:00 GMT-0200", 594_007_200_000),  // MM/dd/yyyy HH:mm:ss 'GMT'z
        ("10.28.1988 00:00:00 GMT+02:00", 593_992_800_000),  // MM.dd.yyyy HH:mm:ss 'GMT'z
        ("10-28-1988 13:45:00 GMT+0530", 594_029_700_000),  // MM-dd-yyyy HH:mm:ss 'GMT'z
        ("10/28/1988 00:00:00 EST", 594_018_000_000),  // MM/dd/yyyy HH:mm:ss z
        ("10.28.1988 00:00:00 PST", 594_028_800_000),  // MM.dd.yyyy HH:mm:ss z
        ("03.23.2015 10:20:30", 1_427_106_030_000),  // MM.dd.yyyy HH:mm:ss
        ("03-23-2015 10:20:30", 1_427_106_030_000),  // MM-dd-yyyy HH:mm:ss
        ("03/23/2015 10:20:30", 1_427_106_030_000),  // MM/dd/yyyy HH:mm:ss
        ("03.23.2015", 1_427_068_800_000),  // MM.dd.yyyy
        ("03-23-2015", 1_427_068_800_000),  // MM-dd-yyyy
        ("10/28/1988 00:00:00 GMT+0100", 593_996_400_000),  // MM/dd/yyyy HH:mm:ss 'GMT'Z
        ("03/23/2015 10:20", 1_427_106_000_000),  // MM/dd/yyyy HH:mm
        ("03/23/2015", 1_427_068_800_000),  // MM/dd/yyyy
        ("23/Mar/2015", 1_427_068_800_000),  // dd/MMM/yyyy
        ("23-Mar-2015", 1_427_068_800_000),  // dd-MMM-yyyy
        ("Monday, 23 March 2015", 1_427_068_800_000),  // EEEEE, d MMMMM yyyy
        ("2015/03/23/10:20:30", 1_427_106_030_000),  // yyyy/MM/d/HH:mm:ss
        ("2015-03-23T10:20:30", 1_427_106_030_000),  // yyyy-MM-dd'T'HH:mm:ss
        ("Monday, March 23, 2015", 1_427_068_800_000),  // EEEEE, MMMMM d, yyyy
        ("March 23, 2015", 1_427_068_800_000),  // MMMMM d, yyyy
        ("2015 3 23", 1_427_068_800_000),  // yyyy M d
        ("2015Mar23", 1_427_068_800_000),  // yyyyMMMd
        ("2015-Mar-23", 1_427_068_800_000),  // yyyy-MMM-d
        ("2015-3-23, Mon", 1_427_068_800_000),  // yyyy-M-d, E
        ("Date 2015-03-23", 1_427_068_800_000),  // 'Date' yyyy-MM-dd
        ("2015-03-23T10:20:30+0200", 1_427_098_830_000),  // yyyy-MM-dd'T'HH:mm:ssZ
        ("2015-03-23T10:20-05:00", 1_427_124_000_000),  // yyyy-MM-dd'T'HH:mmZ
        ("2015-03-23", 1_427_068_800_000),  // yyyy-MM-dd
        ("2015-W13", 1_427_068_800_000),  // yyyy-'W'w: Monday of ISO week 13
        ("2015-082", 1_427_068_800_000),  // yyyy-DDD
        ("23 March 2015, 10h 20m 30s", 1_427_106_030_000),  // d MMMMM yyyy, HH'h' mm'm' ss's'
        ("28-10-1988", 594_000_000_000),  // dd-MM-yyyy
        ("20170101", 1_483_228_800_000),  // yyyyMMdd
        ("10/28/1988 00:00:00 GMT-02:00", 594_007_200_000),
        ("10/28/1988 00:00:00 GMT", 594_000_000_000),
        ("Mon Mar 23 10:20:30 GMT+02:00 2015", 1_427_098_830_000),
        ("2015-03-23T10:20:30Z", 1_427_106_030_000),
        ("3/23/2015", 1_427_068_800_000),
        ("2015-W01", 1_419_811_200_000),  // ISO week 1 of 2015 starts on 2014-12-29
        ("2015-W53", 1_451_260_800_000),  // 2015 is a 53-week year
        ("2016-366", 1_483_142_400_000),  // leap year
    ]

    @Test(arguments: accepted)
    func parses(input: String, expectedMilliseconds: Int64) throws {
        let date = try #require(DateLiteral.parse(input))
        #expect(Int64((date.timeIntervalSince1970 * 1000).rounded()) == expectedMilliseconds)
    }

    @Test(arguments: [
        "", "hello", "13/45/2015", "2015-03-23 garbage", "2015-02-30", "'); DROP TABLE x; --",
        " 2015-03-23", "2015-03-23 ", "2015/03/23", "2015.03.23", "date 2015-03-23", "02/29/2015",
        "2015-03-23T24:00:00", "2015-03-23T10:20:30+0200x", "Funday, March 23, 2015",
        "2014-W53", "2015-W00", "2015-366",
    ])
    func rejects(input: String) {
        #expect(DateLiteral.parse(input) == nil)
    }

    /// ICU divides a fraction of a second by a power of ten it keeps in 32 bits, which wraps to
    /// zero from 35 digits: SIGFPE killed the service (`Fuzz/run.sh json` found it in a save body).
    @Test func refusesFieldsLongerThanICUReads() {
        #expect(DateLiteral.parse("2015-03-23T10:20:30." + String(repeating: "2", count: 40) + "Z") == nil)
        #expect(DateLiteral.parse("2015-03-23T10:20:30.1234567891Z") == nil)
        let nanoseconds = DateLiteral.parse("2015-03-23T10:20:30.123456789Z")
        #expect(nanoseconds.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == 1_427_106_030_123)
    }

    @Test func listsTheSpecPatternsPlusTheTwoFromItsExamples() {
        #expect(DateLiteral.patterns.count == 35)
        #expect(DateLiteral.patterns.suffix(2) == ["dd-MM-yyyy", "yyyyMMdd"])
    }

    @Test func parsesFromManyTasksAtOnce() async {
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<32 {
                group.addTask {
                    Self.accepted.indices.count { index in
                        let (input, expected) = Self.accepted[(index + task) % Self.accepted.count]
                        let millis = DateLiteral.parse(input).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
                        return millis != expected
                    }
                }
            }
            var total = 0
            for await count in group { total += count }
            return total
        }
        #expect(mismatches == 0)
    }
}
