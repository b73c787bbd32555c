// How a message names an input, in the face's words (`namespace: staging`, `--namespace staging`).
// Messages are made far from the face, so the face says once, as it starts, how inputs are named.

export interface InputNaming {
  /** `namespace`, `--namespace`. */
  name(input: string): string
  /** `namespace: staging`, `--namespace staging`. */
  assignment(input: string, value: string): string
  /** Where a required input missing comes from: `game-id`, `--game-id (or GAMEHOST_GAME_ID)`. */
  source(input: string): string
}

export const ACTION_NAMING: InputNaming = {
  name: (input) => input,
  assignment: (input, value) => `${input}: ${value}`,
  source: (input) => input,
}

let naming: InputNaming = ACTION_NAMING

/** Names inputs as `face` does from now on (the CLI's flags); the action's names until then. */
export function nameInputsAs(face: InputNaming): void {
  naming = face
}

export const inputName = (input: string): string => naming.name(input)
export const inputAssignment = (input: string, value: string): string => naming.assignment(input, value)
export const inputSource = (input: string): string => naming.source(input)

/** `a`, `a and b`, `a, b and c`. */
export function inputList(inputs: readonly string[]): string {
  const names = inputs.map(inputName)
  return names.length < 2
    ? (names[0] ?? '')
    : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`
}
