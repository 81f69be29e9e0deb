import AsyncHTTPClient
import NIOHTTP1
import Testing

@testable import GatewayService
@testable import ServiceRuntime

/// The gateway sends a stored file itself only for a location that is an object of the
/// caller's app, and only when files-service named one with a well-formed range.
@Suite struct DirectFilesTests {
    @Test func onlyObjectsOfTheCallersAppAreSent() {
        let key = "abcdef" + String(repeating: "0", count: 26)
        #expect(DirectFiles.isObject("APP1/ab/\(key)", of: "APP1"))
        for path in [
            "APP2/ab/\(key)", "APP1/cd/\(key)", "APP1/ab/\(key)x", "APP1/AB/" + key.uppercased(),
            "APP1/ab/../ab/\(key)", "../APP1/ab/\(key)", "/APP1/ab/\(key)", "APP1/ab/\(key)/x", "APP1/ab", "",
            "APP1//\(key)",
        ] {
            #expect(!DirectFiles.isObject(path, of: "APP1"), "\(path)")
        }
        #expect(!DirectFiles.isObject("../ab/\(key)", of: ".."))
        #expect(!DirectFiles.isObject("/ab/\(key)", of: ""))
    }

    @Test func aLocationNeedsAWellFormedNonEmptyRange() {
        func location(_ range: String?) -> Range<Int64>? {
            var headers: HTTPHeaders = ["x-baas-file-location": "A/ab/k"]
            if let range { headers.add(name: "x-baas-file-range", value: range) }
            return InternalClient.fileLocation(headers)?.range
        }
        #expect(location("0-10") == 0..<10)
        #expect(location("5-6") == 5..<6)
        for bad in [nil, "", "10-10", "10-5", "-1-4", "a-b", "1-2-3", "0-"] {
            #expect(location(bad) == nil, "\(bad ?? "nil")")
        }
        #expect(InternalClient.fileLocation(["x-baas-file-range": "0-10"]) == nil)
    }
}
