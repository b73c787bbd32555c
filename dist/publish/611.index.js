export const id = 611;
export const ids = [611];
export const modules = {

/***/ 7611:
/***/ ((module) => {

module.exports = eval("require")("puppeteer-core");


/***/ })

};
