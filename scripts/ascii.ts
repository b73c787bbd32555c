// A bundle's text with every character beyond ASCII written as a JavaScript escape, as esbuild's
// `charset: 'ascii'` does (ncc has no such option).
//
// Why: V8 keeps a script's source for as long as the script lives, and a source with one character
// beyond Latin-1 is kept as two bytes a character. ncc's bundles hold a few hundred such characters,
// nearly all of them in undici's comments (’), so the deploy bundle's 1.85 M characters were 3.7 MB
// of V8's heap for the whole run, and Node copied them once more (3.7 MB) to compile the module.
//
// Only comments, string literals, untagged template literals and regular expressions may hold such a
// character (anything else fails the build): there `\uXXXX` stands for the same UTF-16 code unit, so
// every value is what it was. A tagged template would see the escape in its raw strings, so it is refused.
import * as acorn from 'acorn'

export function asciiOnly(code: string): string {
  if (!/[\u0080-\uffff]/.test(code)) return code
  const spans: { start: number; end: number }[] = []
  const tree = acorn.parse(code, {
    ecmaVersion: 'latest',
    sourceType: 'module',
    allowHashBang: true,
    onComment: (_block, _text, start, end) => spans.push({ start, end }),
  })
  // A tagged template's function sees its raw strings, where an escape would show.
  const tagged = new Set<acorn.AnyNode>()
  walk(tree, (node, parent) => {
    if (node.type === 'TaggedTemplateExpression') tagged.add(node.quasi)
    else if (node.type === 'Literal') spans.push(node)
    else if (node.type === 'TemplateElement') {
      if (parent && tagged.has(parent)) {
        if (/[\u0080-\uffff]/.test(code.slice(node.start, node.end))) {
          throw new Error(`a tagged template at ${lineOf(code, node.start)} holds a character beyond ASCII`)
        }
      } else spans.push(node)
    }
  })
  spans.sort((a, b) => a.start - b.start)
  let out = ''
  let done = 0
  for (const { start, end } of spans) {
    if (start < done) continue // a literal inside a span already escaped
    out += plain(code, done, start)
    out += code.slice(start, end).replace(/(\\*)([\u0080-\uffff])/g, escaped)
    done = end
  }
  return out + plain(code, done, code.length)
}

type Visit = (node: acorn.AnyNode, parent: acorn.AnyNode | undefined) => void

/** Every node of the tree, depth first, with its parent. */
function walk(node: acorn.AnyNode, visit: Visit, parent?: acorn.AnyNode): void {
  visit(node, parent)
  for (const value of Object.values(node)) {
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child && typeof child === 'object' && typeof (child as { type?: unknown }).type === 'string') {
        walk(child as acorn.AnyNode, visit, node)
      }
    }
  }
}

/** Code outside every comment and literal: must be ASCII already. */
function plain(code: string, start: number, end: number): string {
  const text = code.slice(start, end)
  const at = text.search(/[\u0080-\uffff]/)
  if (at >= 0)
    throw new Error(`a character beyond ASCII outside any literal or comment at ${lineOf(code, start + at)}`)
  return text
}

/**
 * One UTF-16 code unit as an escape (a surrogate pair gives two, which JavaScript joins again), with
 * the backslashes before it. A character already escaped by a backslash (`\’` is `’`) loses that
 * backslash, or `\\u2019` would be a backslash and `u2019`; an escaped line or paragraph separator
 * in a string is a line continuation, nothing, and is dropped whole. In a comment either is harmless.
 */
function escaped(_match: string, slashes: string, unit: string): string {
  if (slashes.length % 2 === 0) return slashes + hex(unit)
  if (unit === '\u2028' || unit === '\u2029') return slashes.slice(1)
  return slashes.slice(1) + hex(unit)
}

const hex = (unit: string) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`

function lineOf(code: string, offset: number): string {
  return `line ${code.slice(0, offset).split('\n').length}`
}
