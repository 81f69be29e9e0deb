import Foundation
import QueryLanguage

/// Converts client values into bound SQL values of a column's type. Policy: numbers and
/// booleans may arrive as strings (QuickBlox and older SDKs send `"34"`), DATETIME takes epoch
/// milliseconds or any ``DateLiteral`` format, text columns take strings only, FILE_REF a
/// file's path or URL (``FileReference``); anything else
/// is a type error naming the property.
enum ValueEncoding {
    /// `value` as a bind for `type`, or nil when it does not fit.
    static func encode(_ value: JSONValue, as type: ColumnType) -> SQLValue? {
        if case .null = value { return .null(sqlCast(type)) }
        switch type {
        case .stringID, .string, .text, .extendedString:
            return value.string.map(SQLValue.text)
        case .fileReference:
            return value.string.flatMap(FileReference.path).map(SQLValue.text)
        case .int, .autoIncrement:
            return value.integerValue.map(SQLValue.integer)
        case .double:
            return double(value).map(SQLValue.double)
        case .boolean:
            return value.boolValue.map(SQLValue.boolean)
        case .datetime:
            return date(value).map(SQLValue.timestamp)
        case .json:
            if case .raw = value { return nil }
            return .json(value.jsonText)
        case .relation:
            return nil
        }
    }

    /// The cast type of a column's values.
    static func sqlCast(_ type: ColumnType) -> String {
        type == .autoIncrement ? "bigint" : type.sqlType
    }

    static func double(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let integer): Double(integer)
        case .number(let number): number
        case .string(let text): Double(text.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil }
        default: nil
        }
    }

    /// Epoch milliseconds (number or numeric string) or a date string, within what PostgreSQL
    /// stores (``TimestampRange``).
    static func date(_ value: JSONValue) -> Date? {
        switch value {
        case .integer(let milliseconds): return TimestampRange.date(milliseconds: Double(milliseconds))
        case .number(let milliseconds): return TimestampRange.date(milliseconds: milliseconds)
        case .string(let text):
            if let milliseconds = Int64(text) { return TimestampRange.date(milliseconds: Double(milliseconds)) }
            return DateLiteral.parse(text).flatMap(TimestampRange.storable)
        default: return nil
        }
    }
}

extension ValueExpression {
    /// The literal as a JSON value, or nil for non-literals.
    var literal: JSONValue? {
        switch self {
        case .string(let text): .string(text)
        case .integer(let integer): .integer(integer)
        case .number(let number): .number(number)
        case .boolean(let bool): .bool(bool)
        case .null: .null
        default: nil
        }
    }
}
