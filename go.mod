module github.com/layercheck/layercheck

go 1.26
