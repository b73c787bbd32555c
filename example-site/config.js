export default { build: 'example', maxPlayers: 16 }
