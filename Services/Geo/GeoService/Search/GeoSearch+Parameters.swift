import DataEngine
import InternalProtocol
import QueryLanguage

extension GeoSearch {
    /// The search a query string names; every malformed or out-of-range parameter is a 4xx.
    /// `rectangle` says whether the route is `…/rect` (whose corners are required).
    init(query items: [(name: String, value: String)], rectangle: Bool) throws(ErrorEnvelope) {
        var parameters: [String: String] = [:]
        for (name, value) in items { parameters[name.lowercased()] = value }
        try self.init(parameters, rectangle: rectangle)
    }

    private init(_ parameters: [String: String], rectangle: Bool) throws(ErrorEnvelope) {
        if let units = parameters["units"], !units.isEmpty { unit = try DistanceUnit(parameter: units) }
        if rectangle {
            area = .rectangle(try Self.rectangle(parameters))
        } else if let area = try Self.radius(parameters, unit: unit) {
            self.area = area
        }
        if case .radius(let radius) = area { center = radius.center } else { center = try Self.center(parameters) }
        if let names = parameters["categories"] {
            categories = try GeoCategoryName.set(
                names.split(separator: ",", omittingEmptySubsequences: true).map(String.init))
        }
        if let text = parameters["metadata"], !text.isEmpty { metadataEquals = try Self.object(text, "metadata") }
        if let text = parameters["where"] ?? parameters["whereclause"], !text.allSatisfy(\.isWhitespace) {
            condition = try Self.condition(text)
        }
        includeMetadata = try Self.flag(parameters["includemetadata"], "includemetadata")
        pageSize = try Self.integer(parameters["pagesize"], "pagesize", default: 100, in: 1...Self.maximumPageSize)
        offset = try Self.integer(parameters["offset"], "offset", default: 0, in: 0...Int(Int32.max))
        clusterCell = try Self.clusterCell(parameters)
        relative = try Self.relative(parameters)
        if let fence = parameters["geofence"], !fence.isEmpty { self.fence = fence }
    }

    private static func radius(_ parameters: [String: String], unit: DistanceUnit) throws(ErrorEnvelope) -> Area? {
        guard let text = parameters["r"], !text.isEmpty else { return nil }
        guard let center = try center(parameters) else {
            throw GeoError.invalidParameter("A radius search needs 'lat' and 'lon'")
        }
        let meters = try Coordinate.degrees(text, "r") * unit.meters
        guard meters > 0, meters <= Sphere.farthest else {
            throw GeoError.invalidParameter(
                "Query parameter 'r' must be above 0 and at most half the Earth's circumference (\(Int(Sphere.farthest)) m)"
            )
        }
        return .radius(Radius(center: center, meters: meters))
    }

    private static func center(_ parameters: [String: String]) throws(ErrorEnvelope) -> Coordinate? {
        switch (
            parameters["lat"].flatMap { $0.isEmpty ? nil : $0 }, parameters["lon"].flatMap { $0.isEmpty ? nil : $0 }
        ) {
        case (nil, nil): return nil
        case (let latitude?, let longitude?):
            return try Coordinate(
                latitude: try Coordinate.degrees(latitude, "lat"), longitude: try Coordinate.degrees(longitude, "lon"))
        default: throw GeoError.invalidParameter("Query parameters 'lat' and 'lon' go together")
        }
    }

    private static func rectangle(_ parameters: [String: String]) throws(ErrorEnvelope) -> GeoRectangle {
        func corner(_ latitude: String, _ longitude: String) throws(ErrorEnvelope) -> Coordinate {
            guard let lat = parameters[latitude], let lon = parameters[longitude] else {
                throw GeoError.invalidParameter("A rectangle needs nwlat, nwlon, selat and selon")
            }
            return try Coordinate(
                latitude: try Coordinate.degrees(lat, latitude), longitude: try Coordinate.degrees(lon, longitude))
        }
        let northWest = try corner("nwlat", "nwlon")
        let southEast = try corner("selat", "selon")
        guard northWest.latitude >= southEast.latitude else {
            throw GeoError.invalidParameter(
                "The rectangle's north-west corner must not be south of its south-east corner")
        }
        if parameters["r"].map({ !$0.isEmpty }) == true {
            throw GeoError.invalidParameter("A search takes a radius or a rectangle, not both")
        }
        return GeoRectangle(
            north: northWest.latitude, west: northWest.longitude, south: southEast.latitude, east: southEast.longitude)
    }

    /// `dpp` (degrees per pixel) times `clustergridsize` (pixels, default 100).
    private static func clusterCell(_ parameters: [String: String]) throws(ErrorEnvelope) -> Double? {
        guard let text = parameters["dpp"], !text.isEmpty else { return nil }
        let degreesPerPixel = try Coordinate.degrees(text, "dpp")
        let pixels = try integer(parameters["clustergridsize"], "clustergridsize", default: 100, in: 1...100_000)
        let cell = degreesPerPixel * Double(pixels)
        guard degreesPerPixel >= GeoSearch.smallestCell, cell <= 360 else {
            throw GeoError.invalidParameter(
                "Query parameter 'dpp' must be at least \(GeoSearch.smallestCell), and dpp × clustergridsize at most 360"
            )
        }
        return cell
    }

    private static func relative(_ parameters: [String: String]) throws(ErrorEnvelope) -> RelativeFind? {
        let metadata = parameters["relativefindmetadata"].flatMap { $0.isEmpty ? nil : $0 }
        let threshold = parameters["relativefindpercentthreshold"].flatMap { $0.isEmpty ? nil : $0 }
        switch (metadata, threshold) {
        case (nil, nil): return nil
        case (let metadata?, let threshold?):
            let object = try object(metadata, "relativeFindMetadata")
            let percent = try Coordinate.degrees(threshold, "relativeFindPercentThreshold")
            guard !object.members.isEmpty, object.members.count <= 64 else {
                throw GeoError.invalidParameter("relativeFindMetadata must name 1 to 64 members")
            }
            guard percent > 0, percent <= 100 else {
                throw GeoError.invalidParameter("relativeFindPercentThreshold must be above 0 and at most 100")
            }
            return RelativeFind(metadata: object, threshold: percent)
        default:
            throw GeoError.invalidParameter("relativeFindMetadata and relativeFindPercentThreshold go together")
        }
    }

    private static func object(_ text: String, _ name: String) throws(ErrorEnvelope) -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONParser.parse(text, maximumDepth: 8)
        } catch {
            throw GeoError.invalidParameter("Query parameter '\(name)' is not valid JSON: \(error.message)")
        }
        guard let object = value.object else {
            throw GeoError.invalidParameter("Query parameter '\(name)' must be a JSON object")
        }
        try GeoMetadata.validate(object)
        return object
    }

    private static func condition(_ text: String) throws(ErrorEnvelope) -> Condition {
        do {
            return try QueryParser.condition(text)
        } catch {
            throw GeoError.invalidWhereClause(error.message)
        }
    }

    private static func flag(_ text: String?, _ name: String) throws(ErrorEnvelope) -> Bool {
        switch text?.lowercased() {
        case nil, "", "false": return false
        case "true": return true
        default: throw GeoError.invalidParameter("Query parameter '\(name)' must be true or false")
        }
    }

    private static func integer(_ text: String?, _ name: String, default value: Int, in range: ClosedRange<Int>)
        throws(ErrorEnvelope) -> Int
    {
        guard let text, !text.isEmpty else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw GeoError.invalidParameter(
                "Query parameter '\(name)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }
}
