package output

// Golden is golden for the package's external tests.
var Golden = golden
