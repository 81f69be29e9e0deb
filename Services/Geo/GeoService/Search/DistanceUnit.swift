import InternalProtocol

/// The units a radius and the answered distances are in.
enum DistanceUnit: String, CaseIterable, Sendable {
    case meters = "METERS", kilometers = "KILOMETERS", miles = "MILES", yards = "YARDS", feet = "FEET"

    /// Metres in one unit.
    var meters: Double {
        switch self {
        case .meters: 1
        case .kilometers: 1000
        case .miles: 1609.344
        case .yards: 0.9144
        case .feet: 0.3048
        }
    }

    /// The unit named `text` in any case (4001 otherwise).
    init(parameter text: String) throws(ErrorEnvelope) {
        guard let unit = Self(rawValue: text.uppercased()) else {
            throw GeoError.invalidParameter(
                "Query parameter 'units' must be one of \(Self.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = unit
    }
}

/// The sphere distances are measured on: PostGIS's mean Earth radius (`use_spheroid => false`),
/// so a search's answers agree with a plain great-circle computation.
enum Sphere {
    /// The mean radius in metres (IUGG, as PostGIS's sphere uses it).
    static let radius = 6_371_008.7714
    /// Half the circumference: no two points are farther apart.
    static let farthest = Double.pi * radius
}
