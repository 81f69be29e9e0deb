import Foundation

/// The instants a PostgreSQL `timestamptz` can hold, 4713 BC to the end of 294276 AD. A client's
/// date outside them is a type error: PostgresNIO binds a `Date` as Int64 microseconds with a
/// conversion that traps beyond ±292,000 years, so no unchecked instant may reach a bind.
enum TimestampRange {
    /// The range in epoch milliseconds (PostgreSQL's `MIN_TIMESTAMP` and `END_TIMESTAMP`).
    static let milliseconds: Range<Double> = -210_866_803_200_000..<9_224_318_016_000_000

    /// The date `value` epoch milliseconds names, or nil when it is not finite or out of range.
    static func date(milliseconds value: Double) -> Date? {
        guard value.isFinite, milliseconds.contains(value) else { return nil }
        return Date(timeIntervalSince1970: value / 1000)
    }

    /// `date` when PostgreSQL can store it, else nil.
    static func storable(_ date: Date) -> Date? {
        self.date(milliseconds: date.timeIntervalSince1970 * 1000)
    }

    /// `date` in microseconds since 1970, truncated as PostgresNIO truncates when it binds a date;
    /// nil outside the range, and for its last 30 years (from 294,247 AD), which that count cannot
    /// hold in 64 bits.
    static func microseconds(_ date: Date) -> Int64? {
        guard storable(date) != nil else { return nil }
        let since2000 = (date.timeIntervalSince(postgresEpoch) * 1_000_000).rounded(.towardZero)
        guard let since2000 = Int64(exactly: since2000) else { return nil }
        let (since1970, overflow) = since2000.addingReportingOverflow(946_684_800_000_000)
        return overflow ? nil : since1970
    }

    /// `date` moved into the range (its nearest end; the epoch when it is not a number).
    static func clamped(_ date: Date) -> Date {
        let value = date.timeIntervalSince1970 * 1000
        guard !value.isNaN else { return Date(timeIntervalSince1970: 0) }
        return Date(
            timeIntervalSince1970: min(max(value, milliseconds.lowerBound), milliseconds.upperBound.nextDown) / 1000)
    }

    private static let postgresEpoch = Date(timeIntervalSince1970: 946_684_800)
}
