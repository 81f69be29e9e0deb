import Foundation
import TestSupport
import Testing

@testable import FilesService

/// Signature V4 against independent answers: AWS's documented GET Object example, and one
/// request of our own shape (path-style, a port, an escaped key and a multipart query) signed
/// by botocore with the same inputs.
@Suite(.tags(.fast)) struct SigV4Tests {
    let signer = SigV4(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        region: "us-east-1")
    let date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z

    func signature(_ headers: [(String, String)]) -> String? {
        headers.first { $0.0 == "authorization" }?.1.split(separator: "Signature=").last.map(String.init)
    }

    @Test func awsDocumentedGetObjectExample() {
        let headers = signer.sign(
            method: "GET", path: "/test.txt", query: [],
            headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")],
            payloadHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", date: date)
        #expect(signature(headers) == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(headers.first { $0.0 == "x-amz-date" }?.1 == "20130524T000000Z")
        let authorization = headers.first { $0.0 == "authorization" }?.1 ?? ""
        #expect(
            authorization.hasPrefix(
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            ))
    }

    @Test func aPartUploadAsBotocoreSignsIt() {
        let headers = signer.sign(
            method: "PUT", path: "/bucket/APP/a%20b", query: [("uploadId", "x+y"), ("partNumber", "2")],
            // botocore signs the (empty) payload over plain HTTP.
            headers: [("host", "127.0.0.1:9000")],
            payloadHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", date: date)
        #expect(signature(headers) == "2f90946cd9752fd4e2092888e94d32f6c178bcb353eed24085e360e027e7df0b")
    }
}
