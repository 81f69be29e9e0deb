import InternalProtocol
import QueryLanguage

/// Geo in where clauses and sorts: `distance(lat, lon, lat, lon)` in metres (`data.distance`,
/// great-circle on geo-service's sphere) and the unit functions `ft()`, `yd()`, `mi()`, `km()`
/// that turn a number of those units into metres, as in
/// `distance(30.26715, -97.74306, coordinates.latitude, coordinates.longitude) < mi(200)`.
enum GeoFunctions {
    /// Metres per unit, by the unit function's name.
    static let metresPerUnit: [String: Double] = ["ft": 0.3048, "yd": 0.9144, "mi": 1_609.344, "km": 1_000]

    /// Whether `name` is `distance` or a unit function.
    static func contains(_ name: String) -> Bool {
        name == "distance" || metresPerUnit[name] != nil
    }

    /// The bounds of each `distance` argument: latitude, longitude, latitude, longitude.
    fileprivate static let argumentBounds: [(name: String, limit: Double)] = [
        ("latitude", 90), ("longitude", 180), ("latitude", 90), ("longitude", 180),
    ]
}

extension ExpressionCompiler {
    /// Writes a ``GeoFunctions`` call; its value is a DOUBLE number of metres.
    func geoFunction(_ name: String, _ arguments: [ValueExpression], into sql: inout SQL) throws -> ColumnType {
        if let factor = GeoFunctions.metresPerUnit[name] {
            guard arguments.count == 1 else { throw DataError.invalidQuery("\(name)() takes one number") }
            sql.append("(")
            try number(arguments[0], in: name, into: &sql)
            sql.append(" * \(factor))")
            return .double
        }
        guard arguments.count == 4 else {
            throw DataError.invalidQuery("distance() takes four numbers: latitude, longitude, latitude, longitude")
        }
        sql.markPlanSensitive()
        sql.append("data.distance(")
        for (index, argument) in arguments.enumerated() {
            if index > 0 { sql.append(", ") }
            let bound = GeoFunctions.argumentBounds[index]
            if let constant = argument.numericLiteral, !(abs(constant) <= bound.limit) {
                throw DataError.invalidQuery("distance(): \(constant) is not a \(bound.name) (±\(Int(bound.limit)))")
            }
            try number(argument, in: name, into: &sql)
        }
        sql.append(")")
        return .double
    }

    private func number(_ argument: ValueExpression, in function: String, into sql: inout SQL) throws {
        if let type = try staticType(argument), !type.isNumeric {
            throw DataError.invalidQuery("\(function)() takes numbers, not \(type.rawValue) values")
        }
        if case .string = argument { throw DataError.invalidQuery("\(function)() takes numbers, not text") }
        try value(argument, context: .double, into: &sql)
    }

}
