export const id = 371;
export const ids = [371];
export const modules = {

/***/ 3371:
/***/ ((module) => {

module.exports = eval("require")("proxy-agent");


/***/ })

};
