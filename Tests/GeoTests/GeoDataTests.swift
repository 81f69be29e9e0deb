import Foundation
import NIOHTTP1
import TestSupport
import Testing

@testable import GeoService

/// Geo inside data queries (issue 15 item 6): GeoPoint relation columns declared through the
/// relation API, `distance()` with unit functions in where clauses and sorts, QuickBlox's
/// `near`, the points loaded with their parents, and the caller's Find filter on both tables.
@Suite(.timeLimit(.minutes(20))) struct GeoDataTests {
    @Test func distanceInWhereClausesAndSortsMatchesTheGreatCircle() async throws {
        let seed = SeededGenerator.seed
        var random = SeededGenerator(seed: seed)
        let spots = try (0..<36).map { _ in try texas(&random) }
        let units: [(name: String, metres: Double)] = [
            ("mi", 1_609.344), ("km", 1_000), ("ft", 0.3048), ("yd", 0.9144),
        ]
        let queries = try (0..<12).map { _ in
            let unit = units.randomElement(using: &random)!
            let amount = (Double.random(in: 50_000...900_000, using: &random) / unit.metres).rounded()
            return (
                center: try texas(&random), unit: unit, amount: amount,
                op: ["<", "<=", ">", ">="].randomElement(using: &random)!
            )
        }
        try await TestCluster.shared { cluster async throws in
            var coordinates: [String: Coordinate] = [:]
            for (index, point) in spots.enumerated() {
                let name = "p\(index)"
                let pointID = try await cluster.savePoint(point.latitude, point.longitude, categories: ["Home"])
                let person = try await cluster.create("Person", name: name)
                let linked = try await cluster.send(
                    .POST, "/data/Person/\(person)/coordinates:GeoPoint:1", #"["\#(pointID)"]"#)
                #expect(linked.text == "1", "\(linked.text)")
                coordinates[name] = point
            }
            for index in 0..<4 { _ = try await cluster.create("Person", name: "nowhere\(index)") }

            for (center, unit, amount, op) in queries {
                let radius = amount * unit.metres
                let distances = coordinates.mapValues { GeoOracle.distance(center, $0) }
                // A point this close to the edge could fall either way by rounding; such a draw proves nothing.
                guard distances.values.allSatisfy({ abs($0 - radius) > 1e-6 * radius }) else { continue }
                let expected = Set(distances.filter { compare($0.value, op, radius) }.keys)
                let clause =
                    "distance(\(center.latitude), \(center.longitude), coordinates.latitude, coordinates.longitude) \(op) \(unit.name)(\(amount))"
                let found = try await cluster.send(.GET, "/data/Person?pageSize=100&where=" + encoded(clause))
                #expect(Set(try found.names()) == expected, "seed \(seed): \(clause)")
            }

            let center = try Coordinate(latitude: 30.26715, longitude: -97.74306)
            let distance =
                "distance(\(center.latitude), \(center.longitude), coordinates.latitude, coordinates.longitude)"
            let nearestFirst = coordinates.sorted {
                GeoOracle.distance(center, $0.value) < GeoOracle.distance(center, $1.value)
            }.map(\.key)
            let sorted = try await cluster.send(
                .GET,
                "/data/Person?pageSize=100&where=coordinates.objectId%20IS%20NOT%20NULL&sortBy=" + encoded(distance))
            #expect(try sorted.names() == nearestFirst, "seed \(seed): \(sorted.text.prefix(300))")
            let farthest = try await cluster.send(
                .GET,
                "/data/Person?pageSize=3&where=coordinates.objectId%20IS%20NOT%20NULL&sortBy="
                    + encoded(distance + " desc"))
            #expect(try farthest.names() == Array(nearestFirst.reversed().prefix(3)), "seed \(seed)")

            // QuickBlox's `near` (longitude first, metres) is the same distance test.
            let radius = 300_000.0
            let near = try await cluster.send(
                .GET,
                "/data/Person/filter?limit=100&coordinates[near]=\(center.longitude),\(center.latitude);\(Int(radius))")
            let nearNames = Set(((near.json["items"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
            #expect(
                nearNames == Set(coordinates.filter { GeoOracle.distance(center, $0.value) <= radius }.keys),
                "\(near.text.prefix(300))")
            // Backbeam's location fields: BQL takes the same distance(), its numbers as parameters.
            let bql = try await cluster.send(
                .POST, "/data/Person/bql",
                #"{"query": "where distance(?, ?, coordinates.latitude, coordinates.longitude) <= km(?)", "params": [\#(center.latitude), \#(center.longitude), 300], "limit": 100}"#
            )
            let bqlNames = Set(((bql.json["objects"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
            #expect(
                bqlNames == Set(coordinates.filter { GeoOracle.distance(center, $0.value) <= radius }.keys),
                "\(bql.text.prefix(300))")
        }
    }

    @Test func geoPointsLoadWithTheirParentsAndStayGeoServicesToChange() async throws {
        try await TestCluster.shared { cluster async throws in
            let austin = try await cluster.savePoint(
                30.26715, -97.74306, categories: ["Home"], metadata: #"{"description": "Bob's home"}"#)
            let houston = try await cluster.savePoint(29.76328, -95.36327, categories: ["Home"])
            let bob = try await cluster.create("Person", name: "Bob")
            #expect(
                try await cluster.send(
                    .POST, "/data/Person/\(bob)/places:GeoPoint:n", #"["\#(austin)", "\#(houston)", "nope"]"#
                ).text == "2")
            #expect(
                try await cluster.send(.POST, "/data/Person/\(bob)/home:GeoPoint:1", #"["\#(austin)"]"#).text == "1")

            let found = try await cluster.send(.GET, "/data/Person?relationsDepth=1")
            let person = try #require(
                (try JSONSerialization.jsonObject(with: found.body) as? [[String: Any]])?.first, "\(found.text)")
            let home = try #require(person["home"] as? [String: Any], "\(found.text)")
            #expect(home["___class"] as? String == "GeoPoint")
            #expect(home["objectId"] as? String == austin)
            #expect(home["latitude"] as? Double == 30.26715 && home["longitude"] as? Double == -97.74306)
            #expect(home["categories"] as? [String] == ["Home"])
            #expect((home["metadata"] as? [String: Any])?["description"] as? String == "Bob's home")
            #expect(
                ((person["places"] as? [[String: Any]]) ?? []).compactMap { $0["objectId"] as? String } == [
                    austin, houston,
                ])
            let loaded = try await cluster.send(.GET, "/data/Person/\(bob)/places?where=" + encoded("longitude > -96"))
            #expect(
                (try JSONSerialization.jsonObject(with: loaded.body) as? [[String: Any]])?.map {
                    $0["objectId"] as? String
                } == [houston])

            // Deleting a point removes it from every relation; the parent stays.
            #expect(try await cluster.send(.DELETE, "/geo/points/\(houston)").status == 200)
            let places = try await cluster.send(.GET, "/data/Person/\(bob)/places")
            #expect(
                (try JSONSerialization.jsonObject(with: places.body) as? [[String: Any]])?.count == 1, "\(places.text)")

            let refusals: [(HTTPMethod, String, String?, Int)] = [
                (.POST, "/data/GeoPoint", #"{"latitude": 1, "longitude": 2}"#, 1029),
                (.PUT, "/data/GeoPoint/\(austin)", #"{"latitude": 1}"#, 1029),
                (.DELETE, "/data/GeoPoint/\(austin)", nil, 1029),
                (.POST, "/data/GeoPoint/\(austin)/owner:Place:1", "[]", 1029),
                (.GET, "/data/Person?where=" + encoded("distance(30, -97, home.latitude) < mi(1)"), nil, 1017),
                (
                    .GET, "/data/Person?where=" + encoded("distance(95, -97, home.latitude, home.longitude) < mi(1)"),
                    nil, 1017
                ),
                (
                    .GET,
                    "/data/Person?where=" + encoded("distance(30, -97, home.latitude, home.longitude) < mi('far')"),
                    nil, 1017
                ),
                (.GET, "/data/Person?where=" + encoded("distance(30, -97, name, home.longitude) < 5"), nil, 1019),
                (.GET, "/data/Person/filter?home[near]=-97.7,30.2", nil, 1017),
                (.GET, "/data/Person/filter?home[near]=-97.7,95;100", nil, 1017),
            ]
            for (method, path, body, code) in refusals {
                let answer = try await cluster.send(method, path, body)
                #expect(
                    answer.json["code"] as? Int == code && (400..<500).contains(answer.status),
                    "\(method) \(path): \(answer.text)")
            }
            let point = try await cluster.send(.GET, "/geo/points/\(austin)/metadata")
            #expect(point.status == 200, "the refused writes left the point alone: \(point.text)")
            #expect(try await cluster.send(.GET, "/data/GeoPoint/count").text == "1")
        }
    }

    @Test func dataObjectsInMetadataAreReferencesLoadedForTheCaller() async throws {
        try await TestCluster.shared { cluster async throws in
            let saved = try await cluster.send(
                .POST, "/geo/points",
                #"{"latitude": 1, "longitude": 2, "metadata": {"owner": {"___class": "Person", "name": "Bob"}, "n": 1}}"#
            )
            let point = try #require(saved.json["geopoint"] as? [String: Any], "\(saved.text)")
            let owner = try #require((point["metadata"] as? [String: Any])?["owner"] as? [String: Any], "\(saved.text)")
            #expect(owner["___class"] as? String == "Person" && owner["name"] as? String == "Bob")
            let bob = try #require(owner["objectId"] as? String)
            #expect(try await cluster.send(.GET, "/data/Person").names() == ["Bob"])
            let reference =
                #"{"latitude": 1.5, "longitude": 2, "metadata": {"owner": {"___class": "Person", "objectId": "\#(bob)"}}}"#
            #expect(try await cluster.send(.POST, "/geo/points", reference).status == 200)
            let found = try await cluster.geo("/geo/points?includemetadata=true")
            #expect(
                found.map { (($0["metadata"] as? [String: Any])?["owner"] as? [String: Any])?["name"] as? String } == [
                    "Bob", "Bob",
                ])
            #expect(try await cluster.send(.GET, "/data/Person/count").text == "1", "a reference saves no object")
            let clusters = try await cluster.geo("/geo/points?includemetadata=true&dpp=1&clustergridsize=100")
            let merged = try #require(clusters.first?["metadata"] as? [String: Any], "\(clusters)")
            #expect(
                clusters.count == 1 && (merged["owner"] as? [String: Any])?["name"] as? String == "Bob", "\(merged)")

            let refusals = [
                #"{"latitude": 1, "longitude": 2, "metadata": {"owner": {"___class": "Person", "objectId": "nope"}}}"#,
                #"{"latitude": 1, "longitude": 2, "metadata": {"owner": {"___class": "1; DROP TABLE x", "name": "x"}}}"#,
                #"{"latitude": 1, "longitude": 2, "metadata": {"owner": {"name": "x"}}}"#,
            ]
            for body in refusals {
                let answer = try await cluster.send(.POST, "/geo/points", body)
                #expect(answer.status == 400 && answer.json["code"] as? Int == 4002, "\(body): \(answer.text)")
            }
            #expect(try await cluster.send(.GET, "/geo/count").text == "2")

            // A caller who may not find the object gets null in its place (once the change has
            // reached geo-service's catalog cache by notification).
            let deny = #"{"permission": "FIND", "role": "RestUser"}"#
            #expect(try await cluster.send(.PUT, "/data/Person/permissions/DENY", deny, key: .serverCode).status == 200)
            let id = try #require(point["objectId"] as? String)
            let metadata = try await eventually {
                try await cluster.send(.GET, "/geo/points/\(id)/metadata")
            } until: {
                $0.json["owner"] is NSNull
            }
            #expect(metadata.json["owner"] is NSNull && metadata.json["n"] as? Int == 1, "\(metadata.text)")
            let hiddenInCluster = try await cluster.geo("/geo/points?includemetadata=true&dpp=1&clustergridsize=100")
            #expect((hiddenInCluster.first?["metadata"] as? [String: Any])?["owner"] is NSNull, "\(hiddenInCluster)")
            let server = try await cluster.send(.GET, "/geo/points/\(id)/metadata", key: .serverCode)
            #expect((server.json["owner"] as? [String: Any])?["name"] as? String == "Bob", "\(server.text)")
        }
    }

    @Test func theFindFilterHidesPeopleAndPointsTheCallerMayNotSee() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/users/register", #"{"email": "bob@example.com", "password": "pw"}"#)
            let login = try await cluster.send(
                .POST, "/users/login", #"{"login": "bob@example.com", "password": "pw"}"#)
            let token = try #require(login.json["user-token"] as? String)
            let austin = try await cluster.send(
                .POST, "/geo/points", #"{"latitude": 30.26715, "longitude": -97.74306}"#, token: token)
            let bobsPoint = try #require((austin.json["geopoint"] as? [String: Any])?["objectId"] as? String)
            let othersPoint = try await cluster.savePoint(30.27, -97.75)
            let home = try await cluster.create("Person", name: "home", token: token)
            let office = try await cluster.create("Person", name: "office", token: token)
            let stranger = try await cluster.create("Person", name: "stranger")
            for (person, point) in [(home, bobsPoint), (office, othersPoint), (stranger, bobsPoint)] {
                #expect(
                    try await cluster.send(.POST, "/data/Person/\(person)/location:GeoPoint:1", #"["\#(point)"]"#).text
                        == "1")
            }
            for table in ["Person", "GeoPoint"] {
                let deny = #"{"permission": "FIND", "role": "AuthenticatedUser"}"#
                #expect(
                    try await cluster.send(.PUT, "/data/\(table)/permissions/DENY", deny, key: .serverCode).status
                        == 200)
                let owner = #"{"permission": "FIND"}"#
                #expect(
                    try await cluster.send(.PUT, "/data/\(table)/permissions/owner/GRANT", owner, key: .serverCode)
                        .status == 200)
            }
            let near =
                "/data/Person?relationsDepth=1&where="
                + encoded("distance(30.26715, -97.74306, location.latitude, location.longitude) < km(5)")
            #expect(Set(try await cluster.send(.GET, near).names()) == ["home", "office", "stranger"])
            // Bob finds his own people only, and only through points he may find.
            #expect(try await cluster.send(.GET, near, token: token).names() == ["home"])
            let all = try await cluster.send(.GET, "/data/Person?relationsDepth=1&sortBy=name", token: token)
            let objects = try #require(try JSONSerialization.jsonObject(with: all.body) as? [[String: Any]])
            #expect(objects.map { $0["name"] as? String } == ["home", "office"])
            #expect((objects.first?["location"] as? [String: Any])?["objectId"] as? String == bobsPoint)
            #expect(
                !(objects.last?["location"] is [String: Any]), "the point Bob may not find stays hidden: \(all.text)")
        }
    }
}

/// A random spot in and around Texas.
private func texas(_ random: inout SeededGenerator) throws -> Coordinate {
    try Coordinate(
        latitude: Double.random(in: 25...36, using: &random), longitude: Double.random(in: -106 ... -90, using: &random)
    )
}

private func compare(_ value: Double, _ op: String, _ bound: Double) -> Bool {
    switch op {
    case "<": value < bound
    case "<=": value <= bound
    case ">": value > bound
    default: value >= bound
    }
}

private func encoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
}

extension TestCluster {
    /// Creates an object with a `name` in `table`; its objectId.
    func create(_ table: String, name: String, token: String? = nil) async throws -> String {
        let created = try await send(.POST, "/data/\(table)", #"{"name": "\#(name)"}"#, token: token)
        return try #require(created.json["objectId"] as? String, "\(created.text)")
    }
}

extension HTTPResult {
    /// The `name` of each object of an array answer.
    func names() throws -> [String] {
        let objects = try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]], "\(text)")
        return objects.map { $0["name"] as? String ?? "?" }
    }
}
