package disaggregated

// S3TestBucket is s3TestBucket, for the package's external tests: a fresh bucket on the
// test S3 server and the s3.* options that reach it.
var S3TestBucket = s3TestBucket
